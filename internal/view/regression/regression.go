// Package regression is the view of data with one output: the whole deep
// GP's fit, each layer's function with its messages and penalties, and
// three figures on demand — the depth comparison (compare.go), the
// message figure (figure.go) and the fit's Monte Carlo density
// (density.go).
package regression

import (
	"context"
	"math"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/plotkit"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"

	"gonum.org/v1/gonum/mat"
)

// Kind names the view.
const Kind = "regression"

// initPerturb randomises the initial model by the seed (see
// train.InitConfig.Perturb), so that "reset with seed" shows different
// starts.
const initPerturb = 0.5

// View is one session's regression view. Its figure state is the
// session's: ops run on the optimizer goroutine, the figure's worker and
// downloads read it under a lock.
type View struct {
	figure     figureState
	densitySeq uint64 // densities asked for (the optimizer goroutine's): each one's Monte Carlo seed
}

// New returns a regression view for one session.
func New() *View { return &View{} }

// Applies reports whether data with q inputs and d outputs are shown as a
// regression: one output.
func Applies(q, d int) bool { return d == 1 }

func (*View) Kind() string { return Kind }

// Preset: the regression view takes the server's default architecture.
func (*View) Preset(*view.Data) (view.Arch, bool) { return view.Arch{}, false }

// Optimizer: the regression view has no preset.
func (*View) Optimizer(c train.TrainerConfig) train.TrainerConfig { return c }

// Init initialises a model on d (train.Initialize), perturbed by the seed.
func (*View) Init(_ context.Context, d *view.Data, a view.Arch, _ int) (*engine.Model, *view.Restarts, error) {
	m, err := train.Initialize(d.X, d.Y, train.InitConfig{Hidden: a.Hidden, Inducing: a.Inducing, Seed: a.Seed, Perturb: initPerturb})
	return m, nil, err
}

// Setup: besides the setup's data, the message figure's colours.
func (*View) Setup(*wire.Encoder, *view.Data) any {
	return &setupSection{Kind: Kind, InputColors: plotkit.PaletteHex()}
}

func (v *View) Ops() []view.Op {
	return append(dataOps(),
		view.Op{Name: "message_figure", Apply: v.figureCommand},
		view.Op{Name: "message_figure_preset", Apply: v.figureCommand},
		view.Op{Name: "message_figure_off", Apply: v.figureCommand},
		view.Op{Name: "fit_density", Apply: v.densityCommand},
		view.Op{Name: "compare", Apply: v.compareCommand},
	)
}

// AnalyzedRows: every frame predicts the output layer's message at the
// training rows (Frame).
func (*View) AnalyzedRows(ds *dataset.Dataset) int {
	n, _ := ds.X.Dims()
	return n
}

func (*View) NewFramer() view.Framer {
	return &framer{ev: engine.Evaluator{Workers: 1}} // frames must not compete with the optimizer
}

// framer builds the regression view's frames: every layer from the
// optimizer's evaluation, the output layer's message at the data, each
// 1-D-input layer's function on a grid, and the fit on a grid over the
// data's input range — cheap enough for every frame.
type framer struct {
	ev   engine.Evaluator
	grid view.GridScratch
	x    []float64
}

// section is the frame's "view" section.
type section struct {
	Kind string    `json:"kind"`
	Fit  *fitFrame `json:"fit,omitempty"`
}

// setupSection is the setup's "view" section.
type setupSection struct {
	Kind string `json:"kind"`
	// InputColors are the message figure's input colours, so that the
	// live panel and the downloads agree.
	InputColors []string `json:"input_colors"`
}

// fitFrame is the whole network's output message on a grid of inputs.
type fitFrame struct {
	G    int      `json:"g"`
	D    int      `json:"d"`
	X    wire.Ref `json:"x"`
	Mean wire.Ref `json:"mean"`
	Var  wire.Ref `json:"var"`
}

func (f *framer) Frame(e *wire.Encoder, s *view.Snapshot) ([]view.LayerFrame, any) {
	m := s.Model
	layers, _ := view.BaseLayers(e, s, view.LayerOptions{})
	nl := len(m.Layers)
	if s.Eval != nil {
		if msgs, err := f.ev.Predict(m, m.X); err == nil {
			layers[nl-1].SetMessage(e, msgs[nl-1])
		}
	}
	for i, l := range m.Layers {
		if _, q, _ := l.Dims(); q != 1 {
			continue
		}
		var in engine.Message
		if i > 0 && s.Eval != nil && i-1 < len(s.Eval.Hidden) {
			in = s.Eval.Hidden[i-1]
		}
		layers[i].Grid = view.Grid(e, m, i, in.Mean, in.Var, &f.grid)
	}
	sec := &section{Kind: Kind}
	if _, q0 := m.X.Dims(); q0 == 1 {
		sec.Fit = f.fit(e, m)
	}
	return layers, sec
}

// fit predicts the whole network's output message on a grid over the
// data's 1-D input range, widened by 5 %.
func (f *framer) fit(e *wire.Encoder, m *engine.Model) *fitFrame {
	lo, hi := inputRange(m.X)
	f.x = view.Grow(f.x, view.GridPoints)
	xs := view.Linspace(f.x, lo, hi)
	msgs, err := f.ev.Predict(m, mat.NewDense(view.GridPoints, 1, xs))
	if err != nil {
		return nil
	}
	last := msgs[len(msgs)-1]
	_, d := last.Mean.Dims()
	return &fitFrame{G: view.GridPoints, D: d, X: e.Arr(xs), Mean: e.Arr(view.DenseData(last.Mean)), Var: e.Arr(view.DenseData(last.Var))}
}

// inputRange returns the range of x's (one column) values widened by 5 %
// (by 1 either side when they are all equal).
func inputRange(x *mat.Dense) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range view.DenseData(x) {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if !(hi > lo) {
		lo, hi = lo-1, hi+1
	}
	pad := 0.05 * (hi - lo)
	return lo - pad, hi + pad
}
