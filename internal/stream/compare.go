package stream

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/train"

	"gonum.org/v1/gonum/mat"
)

// The depth comparison, the paper's step figure live: the session's data
// fitted by 1-, 2- and 3-layer models (hidden widths none, 1 and 1,1), each
// the best by the bound of CompareRestarts restarts, all run concurrently
// off the optimizer's goroutine. Progress and, at the end, each depth's
// fitted curve and rise width go to the page as binary "compare" messages
// through a latest-wins slot (each supersedes the last).

// Comparison settings.
const (
	CompareRestarts = 3
	CompareMaxIters = 5000 // per restart; the convergence test usually stops sooner
	compareGrid     = 200
	compareEvery    = 250 * time.Millisecond // progress messages
)

var compareDepths = [][]int{{}, {1}, {1, 1}}

type compareState struct {
	out  *mailbox[[]byte]
	busy atomic.Bool
}

func newCompareState() *compareState { return &compareState{out: newMailbox[[]byte]()} }

// compareDepth is one depth's progress and result.
type compareDepth struct {
	Layers   int       `json:"layers"`
	Hidden   []int     `json:"hidden"`
	Iters    []int     `json:"iters"`  // per restart, so far
	Bounds   []num     `json:"bounds"` // per restart, so far (null: none yet or failed)
	Done     bool      `json:"done"`
	Best     int       `json:"best"`             // the restart kept (−1 until done)
	Bound    *num      `json:"bound,omitempty"`  // the kept restart's bound
	Rise     *num      `json:"rise,omitempty"`   // 10–90 % rise width of the predictive mean, original x units
	Error    string    `json:"error,omitempty"`  // why the depth failed
	Mean, SD Ref       `json:"-"`                // set in the final message
	MeanRef  *Ref      `json:"mean,omitempty"`   // predictive mean on the grid (model units)
	SDRef    *Ref      `json:"sd,omitempty"`     // predictive sd, noise included
	Status   string    `json:"status,omitempty"` // why the kept restart stopped
	Elapsed  num       `json:"seconds"`          // wall time so far
	started  time.Time `json:"-"`
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
	X        *Ref           `json:"x,omitempty"` // the grid (model units)
	Sections []section      `json:"sections"`
}

func (h *compareHeader) setSections(s []section) { h.Sections = s }

// compareCommand starts the comparison on the session's data.
func (s *session) compareCommand(c Command) (string, error) {
	if _, q := s.data.x.Dims(); q != 1 {
		return "", errorf("compare: the data has %d inputs; the comparison draws one", q)
	}
	if _, d := s.data.y.Dims(); d != 1 {
		return "", errorf("compare: the data has %d outputs; the comparison draws one", d)
	}
	iters := CompareMaxIters
	if c.N != nil {
		iters = *c.N
	}
	if iters < 10 || iters > CompareMaxIters {
		return "", errorf("compare: n = %d iterations per restart out of range 10…%d", iters, CompareMaxIters)
	}
	if !s.compare.busy.CompareAndSwap(false, true) {
		return "", errorf("compare: a comparison is running")
	}
	x, y, d := mat.DenseCopyOf(s.data.x), mat.DenseCopyOf(s.data.y), s.data
	icfg := train.InitConfig{Inducing: s.cfg.Inducing, Seed: s.cfg.Seed}
	go s.runCompare(c.ID, x, y, d, icfg, iters)
	return "compare: fitting 1, 2 and 3 layers", nil
}

func (s *session) runCompare(id int64, x, y *mat.Dense, d *data, icfg train.InitConfig, iters int) {
	defer s.compare.busy.Store(false)
	defer s.recoverPanic("compare")
	var mu sync.Mutex
	depths := make([]compareDepth, len(compareDepths))
	models := make([]*engine.Model, len(compareDepths))
	for i, h := range compareDepths {
		depths[i] = compareDepth{Layers: len(h) + 1, Hidden: slices.Clone(h), Iters: make([]int, CompareRestarts), Bounds: make([]num, CompareRestarts), Best: -1, started: time.Now()}
		for r := range depths[i].Bounds {
			depths[i].Bounds[r] = num(math.NaN())
		}
	}
	send := func(done bool) {
		mu.Lock()
		h := &compareHeader{V: ProtocolVersion, Type: "compare", Applied: id, DataID: d.id, Done: done, Restarts: CompareRestarts}
		h.Depths = make([]compareDepth, len(depths))
		for i := range depths {
			h.Depths[i] = depths[i]
			h.Depths[i].Iters = slices.Clone(depths[i].Iters)
			h.Depths[i].Bounds = slices.Clone(depths[i].Bounds)
			if !depths[i].Done {
				h.Depths[i].Elapsed = num(time.Since(depths[i].started).Seconds())
			}
		}
		mu.Unlock()
		var e encoder
		if done {
			xs := x.RawMatrix().Data
			lo, hi := slices.Min(xs), slices.Max(xs)
			pad := 0.05 * max(hi-lo, 1e-9)
			grid := mat.NewDense(compareGrid, 1, nil)
			for i := range compareGrid {
				grid.Set(i, 0, lo-pad+(hi-lo+2*pad)*float64(i)/float64(compareGrid-1))
			}
			h.G = compareGrid
			gx := e.f32(grid.RawMatrix().Data)
			h.X = &gx
			for i, m := range models {
				if m == nil {
					continue
				}
				var ev engine.Evaluator
				msgs, err := ev.Predict(m, grid)
				if err != nil {
					h.Depths[i].Error = ForPeople(err.Error())
					continue
				}
				last := msgs[len(msgs)-1]
				mean := last.Mean.RawMatrix().Data
				sd := make([]float64, compareGrid)
				for k := range sd {
					sd[k] = math.Sqrt(last.Var.At(k, 0))
				}
				mr, sr := e.f32(mean), e.f32(sd)
				h.Depths[i].MeanRef, h.Depths[i].SDRef = &mr, &sr
				if w, ok := riseWidth(grid.RawMatrix().Data, mean, lo, hi, levels(y.RawMatrix().Data)); ok {
					rw := num(w * d.nx.Scale[0]) // original x units
					h.Depths[i].Rise = &rw
				}
			}
		}
		b, err := e.finish(h)
		if err != nil {
			s.log.Error("compare", "err", err)
			return
		}
		s.compare.out.put(b)
	}
	ctx, cancel := context.WithCancel(s.ctx)
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
					depths[i].Iters[r], depths[i].Bounds[r] = st.Iter, num(st.Bound)
					mu.Unlock()
				})
			mu.Lock()
			defer mu.Unlock()
			dd := &depths[i]
			dd.Done, dd.Elapsed = true, num(time.Since(dd.started).Seconds())
			for r, rep := range reps {
				dd.Iters[r], dd.Bounds[r] = rep.Report.Iters, num(rep.Report.Bound)
				if rep.Err != nil {
					dd.Bounds[r] = num(math.NaN())
				}
			}
			if err != nil {
				dd.Error = ForPeople(err.Error())
				return
			}
			b := num(reps[best].Report.Bound)
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
			send(true)
			return
		case <-tick.C:
			send(false)
		case <-s.ctx.Done():
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
