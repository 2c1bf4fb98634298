// Package explorer is the latent explorer: the view of data with several
// outputs. It shows every hidden layer's messages (the page draws them in
// pairs and in 3-D, coloured by the input, any output or any extra column)
// and judges them with what the data carry: against ground truth, the
// geometry score (dgpviz/internal/latent) beside two baselines that use no
// model — the outputs' principal components and the input alone — and
// against a test split, the held-out error beside the training mean and a
// one-layer GP. The robot WiFi data (time → 30 signals, with the robot's
// true path and a test split) is one such data set; the explorer's preset
// is the paper's robot model.
package explorer

import (
	"context"
	"math"
	"sync"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
	"dgpviz/internal/train"
	"dgpviz/internal/view"

	"gonum.org/v1/gonum/mat"
)

// Kind names the view.
const Kind = "explorer"

// AnalysisEvery is the least time between two analyses while the optimizer
// runs: about 5 a second, each 5–10 ms of one core on the robot data.
const AnalysisEvery = 200 * time.Millisecond

// baselineLatentDims is the width of the outputs' principal-component
// baseline: as wide as the preset's hidden layers.
const baselineLatentDims = 3

// Applies reports whether ds is shown in the explorer: several outputs that
// are not its inputs.
func Applies(ds *dataset.Dataset) bool {
	_, d := ds.Y.Dims()
	return d >= 2 && !ds.IsAutoencoder()
}

// View is the explorer for one session.
type View struct {
	env *view.Env
	// facts are what the explorer works out once per data set (the data
	// cannot be edited in this view).
	mu    sync.Mutex
	facts map[*dataset.Dataset]*facts
}

// New returns an explorer for one session of a server with env.
func New(env *view.Env) *View { return &View{env: env, facts: map[*dataset.Dataset]*facts{}} }

func (*View) Kind() string { return Kind }

// Preset is the paper's robot model: two 3-D hidden layers, the first
// started from the outputs' principal components.
func (*View) Preset(*view.Data) (view.Arch, bool) {
	p := train.RobotPreset(0)
	return view.Arch{Hidden: p.Init.Hidden, Inducing: p.Init.Inducing, Restarts: p.Restarts}, true
}

// Init runs the preset's restarts and keeps their models, scored by the
// geometry of their first hidden layer when the data carry ground truth.
func (v *View) Init(ctx context.Context, d *view.Data, a view.Arch, workers int) (*engine.Model, *view.Restarts, error) {
	m, reps, err := view.StartPreset(ctx, train.RobotPreset(a.Seed), d, a, workers)
	if err != nil {
		return m, nil, err
	}
	f := v.factsOf(d)
	scoreName := ""
	var score func(*engine.Model, *engine.Result) float64
	if f.truth != nil {
		scoreName = "geometry h₁"
		score = func(_ *engine.Model, res *engine.Result) float64 {
			if len(res.Messages) < 2 {
				return math.NaN()
			}
			s, err := latent.LoopClosure(res.Messages[0].Mean, f.truth, f.rule)
			if err != nil {
				return math.NaN()
			}
			return s.Value
		}
	}
	_, q := d.X.Dims()
	return m, view.NewRestarts(reps, q, scoreName, score), nil
}

func (*View) Ops() []view.Op { return nil }

// AnalyzedRows: the analysis predicts the training rows and the held-out
// ones (analyze).
func (*View) AnalyzedRows(ds *dataset.Dataset) int {
	n, _ := ds.X.Dims()
	if ds.XTest != nil {
		t, _ := ds.XTest.Dims()
		n += t
	}
	return n
}

// facts are what the explorer knows of a data set: its ground truth and
// the score's rule, the baselines' scores, and the test split in model
// units.
type facts struct {
	ds     *dataset.Dataset
	nTrain int
	truth  *mat.Dense // the training rows' ground truth, nil without
	rule   latent.Rule
	// baselines are the geometry scores of the latents that use no model.
	baselines []baseline
	xTest     *mat.Dense // normalised test inputs, nil without a split
	yTest     *mat.Dense // test outputs, original units
	normY     dataset.Normalizer
	meanRMSE  float64 // the training mean's test RMSE, original units
}

type baseline struct {
	name  string
	score latent.Score
}

func (v *View) factsOf(d *view.Data) *facts {
	v.mu.Lock()
	defer v.mu.Unlock()
	if f, ok := v.facts[d.Set]; ok {
		return f
	}
	ds := d.Set
	f := &facts{ds: ds, normY: d.NormY, meanRMSE: math.NaN()}
	f.nTrain, _ = ds.X.Dims()
	if t := ds.Truth; t != nil {
		if r, c := t.Dims(); r >= f.nTrain && c >= 1 {
			f.truth = mat.DenseCopyOf(t.Slice(0, f.nTrain, 0, c))
			f.rule = latent.RuleFor(f.truth)
			for _, b := range []struct {
				name string
				lat  *mat.Dense
			}{
				{"principal components of the outputs", latent.OutputBaseline(ds.Y, baselineLatentDims)},
				{"the input alone", latent.InputBaseline(ds.X)},
			} {
				s, err := latent.LoopClosure(b.lat, f.truth, f.rule)
				if err != nil {
					s.Value = math.NaN()
				}
				f.baselines = append(f.baselines, baseline{b.name, s})
			}
		}
	}
	if ds.XTest != nil && ds.YTest != nil {
		f.xTest = d.NormX.Apply(ds.XTest)
		f.yTest = ds.YTest
		nt, dy := ds.YTest.Dims()
		f.meanRMSE = f.rmse(mat.NewDense(nt, dy, nil)) // normalised 0 is the training mean
	}
	v.facts[ds] = f
	return f
}

// rmse is the root mean squared error, in the outputs' original units, of
// predicted means (normalised, nTest × d) at the test rows.
func (f *facts) rmse(mean *mat.Dense) float64 {
	if f.yTest == nil || mean == nil {
		return math.NaN()
	}
	n, d := f.yTest.Dims()
	if r, c := mean.Dims(); r != n || c != d {
		return math.NaN()
	}
	var s float64
	for i := range n {
		for j := range d {
			e := mean.At(i, j)*f.normY.Scale[j] + f.normY.Mean[j] - f.yTest.At(i, j)
			s += e * e
		}
	}
	return math.Sqrt(s / float64(n*d))
}

// gp1RMSE is the test RMSE of a one-layer sparse GP from the inputs to the
// outputs, fitted once per data set in the background (NaN when it
// cannot be fitted).
func (v *View) gp1RMSE(f *facts) *view.Memo {
	return v.env.Once(gp1Key{f.ds}, func(ctx context.Context) any {
		if f.xTest == nil {
			return math.NaN()
		}
		nx, ny := dataset.FitNormalizer(f.ds.X), f.normY
		m, err := train.Initialize(nx.Apply(f.ds.X), ny.Apply(f.ds.Y), train.InitConfig{Inducing: train.RobotInducing, Seed: 1})
		if err != nil {
			return math.NaN()
		}
		fm, _, err := train.Fit(ctx, m, train.TrainerConfig{Workers: 1}, train.FitOptions{MaxIters: v.env.BaselineIters})
		if err != nil {
			return math.NaN()
		}
		ev := engine.Evaluator{Workers: 1}
		msgs, err := ev.Predict(fm, f.xTest)
		if err != nil {
			return math.NaN()
		}
		return f.rmse(msgs[len(msgs)-1].Mean)
	})
}

type gp1Key struct{ ds *dataset.Dataset }
