package regression

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"

	"gonum.org/v1/gonum/mat"
)

// The depth comparison, the paper's step figure live: the session's data
// fitted by 1-, 2- and 3-layer models (hidden widths none, 1 and 1,1), each
// the best by the bound of CompareRestarts restarts, all run concurrently
// in the background. Progress and, at the end, each depth's fitted curve
// and rise width go to the page as binary "compare" messages (each
// supersedes the last).

// Comparison settings.
const (
	CompareRestarts = 3
	CompareMaxIters = 5000 // per restart; the convergence test usually stops sooner
	compareGrid     = 200
	compareEvery    = 250 * time.Millisecond // progress messages
)

var compareDepths = [][]int{{}, {1}, {1, 1}}

// compareDepth is one depth's progress and result.
type compareDepth struct {
	Layers   int        `json:"layers"`
	Hidden   []int      `json:"hidden"`
	Iters    []int      `json:"iters"`  // per restart, so far
	Bounds   []wire.Num `json:"bounds"` // per restart, so far (null: none yet or failed)
	Done     bool       `json:"done"`
	Best     int        `json:"best"`             // the restart kept (−1 until done)
	Bound    *wire.Num  `json:"bound,omitempty"`  // the kept restart's bound
	Rise     *wire.Num  `json:"rise,omitempty"`   // 10–90 % rise width of the predictive mean, original x units
	Error    string     `json:"error,omitempty"`  // why the depth failed
	Mean, SD wire.Ref   `json:"-"`                // set in the final message
	MeanRef  *wire.Ref  `json:"mean,omitempty"`   // predictive mean on the grid (model units)
	SDRef    *wire.Ref  `json:"sd,omitempty"`     // predictive sd, noise included
	Status   string     `json:"status,omitempty"` // why the kept restart stopped
	Elapsed  wire.Num   `json:"seconds"`          // wall time so far
	started  time.Time  `json:"-"`
}

type compareHeader struct {
	V        int            `json:"v"`
	Type     string         `json:"type"`
	Applied  int64          `json:"applied"`
	DataID   int            `json:"data_id"`
	Done     bool           `json:"done"`
	Restarts int            `json:"restarts"`
	Depths   []compareDepth `json:"depths"`
	G        int            `json:"g"`
	X        *wire.Ref      `json:"x,omitempty"` // the grid (model units)
	Sections []wire.Section `json:"sections"`
}

func (h *compareHeader) SetSections(s []wire.Section) { h.Sections = s }

// compareCommand starts the comparison on the session's data.
func (v *View) compareCommand(s view.Session, c wire.Command) (string, error) {
	d := s.Data()
	if _, q := d.X.Dims(); q != 1 {
		return "", fmt.Errorf("compare: the data have %d inputs; the comparison draws one", q)
	}
	if _, dy := d.Y.Dims(); dy != 1 {
		return "", fmt.Errorf("compare: the data have %d outputs; the comparison draws one", dy)
	}
	iters := CompareMaxIters
	if c.N != nil {
		iters = *c.N
	}
	if iters < 10 || iters > CompareMaxIters {
		return "", fmt.Errorf("compare: %d iterations per restart is out of range 10…%d", iters, CompareMaxIters)
	}
	x, y := mat.DenseCopyOf(d.X), mat.DenseCopyOf(d.Y)
	icfg := train.InitConfig{Inducing: s.Arch().Inducing, Seed: s.Arch().Seed}
	err := s.Go("compare", func(ctx context.Context, send func([]byte)) { runCompare(ctx, send, c.ID, x, y, d, icfg, iters) })
	if err != nil {
		return "", fmt.Errorf("compare: %w", err)
	}
	return "compare: fitting 1, 2 and 3 layers", nil
}

func runCompare(ctx context.Context, send func([]byte), id int64, x, y *mat.Dense, d *view.Data, icfg train.InitConfig, iters int) {
	var mu sync.Mutex
	depths := make([]compareDepth, len(compareDepths))
	models := make([]*engine.Model, len(compareDepths))
	for i, h := range compareDepths {
		depths[i] = compareDepth{Layers: len(h) + 1, Hidden: slices.Clone(h), Iters: make([]int, CompareRestarts), Bounds: make([]wire.Num, CompareRestarts), Best: -1, started: time.Now()}
		for r := range depths[i].Bounds {
			depths[i].Bounds[r] = wire.Num(math.NaN())
		}
	}
	message := func(done bool) {
		mu.Lock()
		h := &compareHeader{V: wire.Version, Type: "compare", Applied: id, DataID: d.ID, Done: done, Restarts: CompareRestarts}
		h.Depths = make([]compareDepth, len(depths))
		for i := range depths {
			h.Depths[i] = depths[i]
			h.Depths[i].Iters = slices.Clone(depths[i].Iters)
			h.Depths[i].Bounds = slices.Clone(depths[i].Bounds)
			if !depths[i].Done {
				h.Depths[i].Elapsed = wire.Num(time.Since(depths[i].started).Seconds())
			}
		}
		mu.Unlock()
		var e wire.Encoder
		if done {
			xs := x.RawMatrix().Data
			lo, hi := slices.Min(xs), slices.Max(xs)
			pad := 0.05 * max(hi-lo, 1e-9)
			grid := mat.NewDense(compareGrid, 1, nil)
			for i := range compareGrid {
				grid.Set(i, 0, lo-pad+(hi-lo+2*pad)*float64(i)/float64(compareGrid-1))
			}
			h.G = compareGrid
			gx := e.F32(grid.RawMatrix().Data)
			h.X = &gx
			for i, m := range models {
				if m == nil {
					continue
				}
				var ev engine.Evaluator
				msgs, err := ev.Predict(m, grid)
				if err != nil {
					h.Depths[i].Error = err.Error()
					continue
				}
				last := msgs[len(msgs)-1]
				mean := last.Mean.RawMatrix().Data
				sd := make([]float64, compareGrid)
				for k := range sd {
					sd[k] = math.Sqrt(last.Var.At(k, 0))
				}
				mr, sr := e.F32(mean), e.F32(sd)
				h.Depths[i].MeanRef, h.Depths[i].SDRef = &mr, &sr
				if w, ok := riseWidth(grid.RawMatrix().Data, mean, lo, hi, levels(y.RawMatrix().Data)); ok {
					rw := wire.Num(w * d.NormX.Scale[0]) // original x units
					h.Depths[i].Rise = &rw
				}
			}
		}
		if b, err := e.Finish(h); err == nil {
			send(b)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i, h := range compareDepths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ic := icfg
			ic.Hidden = h
			m, best, reps, err := train.FitRestarts(ctx, x, y, ic, train.TrainerConfig{Workers: 1}, train.FitOptions{MaxIters: iters}, CompareRestarts,
				func(r int, st train.StepInfo) {
					mu.Lock()
					depths[i].Iters[r], depths[i].Bounds[r] = st.Iter, wire.Num(st.Bound)
					mu.Unlock()
				})
			mu.Lock()
			defer mu.Unlock()
			dd := &depths[i]
			dd.Done, dd.Elapsed = true, wire.Num(time.Since(dd.started).Seconds())
			for r, rep := range reps {
				dd.Iters[r], dd.Bounds[r] = rep.Report.Iters, wire.Num(rep.Report.Bound)
				if rep.Err != nil {
					dd.Bounds[r] = wire.Num(math.NaN())
				}
			}
			if err != nil {
				dd.Error = err.Error()
				return
			}
			b := wire.Num(reps[best].Report.Bound)
			dd.Best, dd.Bound, dd.Status = best, &b, reps[best].Report.Status.String()
			models[i] = m
		}()
	}
	tick := time.NewTicker(compareEvery)
	defer tick.Stop()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for {
		select {
		case <-done:
			message(true)
			return
		case <-tick.C:
			message(false)
		case <-ctx.Done():
			return
		}
	}
}

// levels returns the data's low and high output levels: the 10th and 90th
// percentiles (for a step, its two sides).
func levels(y []float64) [2]float64 {
	v := slices.Clone(y)
	slices.Sort(v)
	at := func(q float64) float64 { return v[int(math.Round(q*float64(len(v)-1)))] }
	return [2]float64{at(0.1), at(0.9)}
}

// riseWidth is the input distance, within the data's inputs [x0, x1], over
// which the curve first crosses from 10 % to 90 % of the way between the
// data's levels (or back), by linear interpolation between grid points —
// the README's 10–90 % rise width of the step.
func riseWidth(x, y []float64, x0, x1 float64, lv [2]float64) (float64, bool) {
	lo, hi := lv[0], lv[1]
	if !(hi > lo) {
		return 0, false
	}
	cross := func(level float64) float64 {
		for i := 1; i < len(y); i++ {
			if x[i-1] < x0 || x[i] > x1 {
				continue
			}
			a, b := y[i-1], y[i]
			if (a-level)*(b-level) <= 0 && a != b {
				return x[i-1] + (level-a)/(b-a)*(x[i]-x[i-1])
			}
		}
		return math.NaN()
	}
	w := math.Abs(cross(lo+0.9*(hi-lo)) - cross(lo+0.1*(hi-lo)))
	return w, !math.IsNaN(w)
}
