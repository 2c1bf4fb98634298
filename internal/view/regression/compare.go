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
	Layers int        `json:"layers"`
	Hidden []int      `json:"hidden"`
	Iters  []int      `json:"iters"`  // per restart, so far
	Bounds []wire.Num `json:"bounds"` // per restart, so far (null: none yet or failed)
	Done   bool       `json:"done"`
	Best   int        `json:"best"`            // the restart kept (−1 until done)
	Bound  *wire.Num  `json:"bound,omitempty"` // the kept restart's bound
	Rise   *wire.Num  `json:"rise,omitempty"`  // 10–90 % rise width of the predictive mean, original x units
	// Overshoot is DepthFit.Overshoot: how far the mean goes beyond the
	// data's levels, original y units.
	Overshoot *wire.Num `json:"overshoot,omitempty"`
	Error     string    `json:"error,omitempty"`  // why the depth failed
	Mean, SD  wire.Ref  `json:"-"`                // set in the final message
	MeanRef   *wire.Ref `json:"mean,omitempty"`   // predictive mean on the grid (model units)
	SDRef     *wire.Ref `json:"sd,omitempty"`     // predictive sd, noise included
	Status    string    `json:"status,omitempty"` // why the kept restart stopped
	Elapsed   wire.Num  `json:"seconds"`          // wall time so far
	started   time.Time `json:"-"`
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
	icfg := train.InitConfig{Inducing: s.Arch().Inducing, Seed: s.Arch().Seed}
	err := s.Go("compare", func(ctx context.Context, send func([]byte)) { runCompare(ctx, send, c.ID, d, icfg, iters) })
	if err != nil {
		return "", fmt.Errorf("compare: %w", err)
	}
	return "compare: fitting 1, 2 and 3 layers", nil
}

func runCompare(ctx context.Context, send func([]byte), id int64, d *view.Data, icfg train.InitConfig, iters int) {
	var mu sync.Mutex
	depths := make([]compareDepth, len(compareDepths))
	fits := make([]*DepthFit, len(compareDepths))
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
			h.G = compareGrid
			gx := e.F32(compareInputs(d.X.RawMatrix().Data))
			h.X = &gx
			for i, f := range fits {
				if f == nil {
					continue
				}
				mr, sr := e.F32(f.Mean), e.F32(f.SD)
				h.Depths[i].MeanRef, h.Depths[i].SDRef = &mr, &sr
				if !math.IsNaN(f.Rise) {
					rw := wire.Num(f.Rise)
					h.Depths[i].Rise = &rw
				}
				ov := wire.Num(f.Overshoot)
				h.Depths[i].Overshoot = &ov
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
			f, err := FitDepth(ctx, d, icfg, h, iters, func(r int, st train.StepInfo) {
				mu.Lock()
				depths[i].Iters[r], depths[i].Bounds[r] = st.Iter, wire.Num(st.Bound)
				mu.Unlock()
			})
			mu.Lock()
			defer mu.Unlock()
			dd := &depths[i]
			dd.Done, dd.Elapsed = true, wire.Num(time.Since(dd.started).Seconds())
			for r, rep := range f.Reports {
				dd.Iters[r], dd.Bounds[r] = rep.Report.Iters, wire.Num(rep.Report.Bound)
				if rep.Err != nil {
					dd.Bounds[r] = wire.Num(math.NaN())
				}
			}
			if err != nil {
				dd.Error = err.Error()
				return
			}
			b := wire.Num(f.Bound)
			dd.Best, dd.Bound, dd.Status = f.Best, &b, f.Reports[f.Best].Report.Status.String()
			fits[i] = f
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

// DepthFit is one depth of the comparison, fitted: the best by the bound
// of CompareRestarts restarts, and the shape of its predictive mean —
// what the depth slide shows and the lessons' claims rest on.
type DepthFit struct {
	Hidden  []int
	Model   *engine.Model
	Best    int                   // the restart kept
	Reports []train.RestartReport // every restart's, also on error
	Bound   float64               // the kept restart's
	// Mean and SD (noise included) are the predictive's at the inputs X
	// (compareGrid inputs across the data's range and 5 % beyond it),
	// model units.
	X, Mean, SD []float64
	// Rise is the 10–90 % rise width of the mean (riseWidth), original
	// input units; NaN when the mean does not cross both levels.
	Rise float64
	// Overshoot is how far the mean goes beyond the data's levels
	// (levels) within the data's inputs, original output units: negative
	// when it stays inside them.
	Overshoot float64
}

// FitDepth fits the data d with the given hidden widths as the depth
// comparison does (CompareRestarts restarts of at most iters iterations
// each, one worker) and measures its mean's shape. progress, if not nil,
// is FitRestarts's. On error the DepthFit still holds the restarts'
// reports.
func FitDepth(ctx context.Context, d *view.Data, icfg train.InitConfig, hidden []int, iters int, progress func(restart int, s train.StepInfo)) (*DepthFit, error) {
	icfg.Hidden = slices.Clone(hidden)
	m, best, reps, err := train.FitRestarts(ctx, d.X, d.Y, icfg, train.TrainerConfig{Workers: 1}, train.FitOptions{MaxIters: iters}, CompareRestarts, progress)
	f := &DepthFit{Hidden: icfg.Hidden, Model: m, Best: best, Reports: reps, Rise: math.NaN()}
	if err != nil {
		return f, err
	}
	f.Bound = reps[best].Report.Bound
	xs := d.X.RawMatrix().Data
	grid := compareInputs(xs)
	var ev engine.Evaluator
	msgs, err := ev.Predict(m, mat.NewDense(len(grid), 1, grid))
	if err != nil {
		return f, err
	}
	last := msgs[len(msgs)-1]
	f.X, f.Mean = grid, slices.Clone(last.Mean.RawMatrix().Data)
	f.SD = make([]float64, len(grid))
	for k := range f.SD {
		f.SD[k] = math.Sqrt(last.Var.At(k, 0))
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	lv := levels(d.Y.RawMatrix().Data)
	if w, ok := riseWidth(grid, f.Mean, lo, hi, lv); ok {
		f.Rise = w * d.NormX.Scale[0]
	}
	f.Overshoot = overshoot(grid, f.Mean, lo, hi, lv) * d.NormY.Scale[0]
	return f, nil
}

// compareInputs is the comparison's grid: compareGrid inputs across the
// data's range and 5 % beyond it on either side.
func compareInputs(x []float64) []float64 {
	lo, hi := slices.Min(x), slices.Max(x)
	pad := 0.05 * max(hi-lo, 1e-9)
	g := make([]float64, compareGrid)
	for i := range g {
		g[i] = lo - pad + (hi-lo+2*pad)*float64(i)/float64(compareGrid-1)
	}
	return g
}

// overshoot is the largest distance by which the curve y over x leaves
// the data's levels [lv[0], lv[1]] within the inputs [x0, x1] (negative:
// the distance by which it stays inside).
func overshoot(x, y []float64, x0, x1 float64, lv [2]float64) float64 {
	o := math.Inf(-1)
	for i, v := range y {
		if x[i] >= x0 && x[i] <= x1 {
			o = math.Max(o, math.Max(v-lv[1], lv[0]-v))
		}
	}
	return o
}

// levels returns the data's low and high output levels: the means of the
// outputs below and above their midrange (for a step, its two sides; the
// noise averages out, so a mean that follows the data does not
// overshoot them by the noise).
func levels(y []float64) [2]float64 {
	mid := (slices.Min(y) + slices.Max(y)) / 2
	var s [2]float64
	var n [2]int
	for _, v := range y {
		k := 0
		if v > mid {
			k = 1
		}
		s[k] += v
		n[k]++
	}
	if n[0] == 0 || n[1] == 0 {
		return [2]float64{mid, mid}
	}
	return [2]float64{s[0] / float64(n[0]), s[1] / float64(n[1])}
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
