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
	"cmp"
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
	"dgpviz/internal/linalg"
	"dgpviz/internal/train"
	"dgpviz/internal/view"

	"gonum.org/v1/gonum/mat"
)

// Kind names the view.
const Kind = "explorer"

// DefaultBaselineIters is the L-BFGS iterations of the one-layer GP
// baseline when the server's view.Env leaves them at 0: by 1500
// iterations the baseline's test RMSE has settled (9.2–9.5 dBm on the
// real data at 1500 to 6000 iterations), where at 300 it still depended
// on the optimizer's path (9.6 or 15.1 dBm from builds that differ only in
// rounding); about 2 s of one core.
const DefaultBaselineIters = 1500

// AnalysisEvery is the least time between two analyses while the optimizer
// runs: about 5 a second, each 5–10 ms of one core on the robot data.
const AnalysisEvery = 200 * time.Millisecond

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
	// batch is the minibatch of Adam's steps on data shown by a sample
	// (0: the full data), set by Init.
	batch atomic.Int64
	// means are every row's hidden means of the model meansOf (allMeans).
	meansMu sync.Mutex
	means   [][2]*mat.Dense
	meansOf *engine.Model
}

// New returns an explorer for one session of a server with env.
func New(env *view.Env) *View { return &View{env: env, facts: map[*dataset.Dataset]*facts{}} }

func (*View) Kind() string { return Kind }

// Preset is the paper's robot model: two 3-D hidden layers, the first
// started from the outputs' principal components; above SampleRows rows
// one start, without the preset's restarts (Init). d may be nil (data
// not yet known): the preset as it is.
func (v *View) Preset(d *view.Data) (view.Arch, bool) {
	p := train.RobotPreset(0)
	a := view.Arch{Hidden: p.Init.Hidden, Inducing: p.Init.Inducing, Restarts: p.Restarts}
	if d != nil && !v.factsOf(d).sample.All() {
		a.Restarts = 0
	}
	return a, true
}

// Optimizer returns c with the preset's optimizer settings, and Adam's
// steps on minibatches of SampleRows rows when the data are shown by a
// sample (SVI's are its own, train.DefaultStochasticBatch).
func (v *View) Optimizer(c train.TrainerConfig) train.TrainerConfig {
	if b := int(v.batch.Load()); b > 0 && c.BatchSize == 0 && c.Method == (train.Adam{}) {
		c.BatchSize = b
	}
	return train.RobotPreset(0).Trainer(c)
}

// Init runs the preset's restarts and keeps their models, scored by the
// geometry of their first hidden layer when the data carry ground truth.
// Data shown by a sample start once, from the preset's principal-
// component start made on the sample's rows, then fitted to every row:
// two restarts of 200 iterations on a million rows would take an hour
// where the page should draw within seconds, and the start is made of
// column means, variances and principal components, which 4,096
// stratified rows estimate well.
func (v *View) Init(ctx context.Context, d *view.Data, a view.Arch, workers int) (*engine.Model, *view.Restarts, error) {
	if f := v.factsOf(d); !f.sample.All() {
		v.batch.Store(SampleRows)
		p := train.RobotPreset(a.Seed).Init
		p.Hidden, p.Inducing, p.Seed = slices.Clone(a.Hidden), a.Inducing, a.Seed
		m, err := train.Initialize(f.sampleX, linalg.Rows(d.Y, f.sample.Train), p)
		if err != nil {
			return nil, nil, err
		}
		// the data are never written (view.Data): the model shares them
		m.X, m.Y = d.X, d.Y
		return m, nil, m.Validate()
	}
	m, reps, err := view.StartPreset(ctx, train.RobotPreset(a.Seed), d, a, workers)
	if err != nil {
		return m, nil, err
	}
	f := v.factsOf(d)
	scoreName := ""
	var score func(*engine.Model, *engine.Result) float64
	if g := f.geometry; g != nil {
		scoreName = "geometry h₁"
		score = func(_ *engine.Model, res *engine.Result) float64 {
			if len(res.Messages) < 2 {
				return math.NaN()
			}
			return g.Score(res.Messages[0].Mean).Value
		}
	}
	_, q := d.X.Dims()
	return m, view.NewRestarts(reps, q, scoreName, score), nil
}

// AnalyzedRows: the analysis predicts the training rows and the held-out
// ones (analyze), or, above SampleRows rows, the sample's rows and a
// chunk of the pass over every row (allRows).
func (*View) AnalyzedRows(ds *dataset.Dataset) int {
	n, _ := ds.X.Dims()
	if ds.XTest != nil {
		t, _ := ds.XTest.Dims()
		n += t
	}
	if n > SampleRows {
		return SampleRows + allChunk
	}
	return n
}

// facts are what the explorer knows of a data set (latent.NewGeometry,
// latent.NewHeldOut): its ground truth, the score's rule and the
// baselines' scores, and the test split in model units.
type facts struct {
	ds       *dataset.Dataset
	nTrain   int
	geometry *latent.Geometry // nil without ground truth
	heldOut  *latent.HeldOut  // nil without a test split
	// sample is the rows the setup and the frames carry (every row up to
	// SampleRows), and sampleX, sampleXTest its inputs (normalised).
	sample               *Sample
	sampleX, sampleXTest *mat.Dense
}

func (v *View) factsOf(d *view.Data) *facts {
	v.mu.Lock()
	defer v.mu.Unlock()
	if f, ok := v.facts[d.Set]; ok {
		return f
	}
	ds := d.Set
	f := &facts{ds: ds, geometry: latent.NewGeometry(ds), heldOut: latent.NewHeldOut(ds, d.NormX, d.NormY)}
	f.nTrain, _ = ds.X.Dims()
	_, nTest := ds.Rows()
	f.sample = NewSample(f.nTrain, nTest, SampleRows, sampleSeed)
	f.sampleX = linalg.Rows(d.X, f.sample.Train)
	if f.heldOut != nil {
		f.sampleXTest = linalg.Rows(f.heldOut.X, f.sample.Test)
	}
	v.facts[ds] = f
	return f
}

// gp1RMSE is the test RMSE of a one-layer sparse GP from the inputs to the
// outputs (OneLayerGP), fitted once per data set in the background
// (NaN when it cannot be fitted).
func (v *View) gp1RMSE(f *facts) *view.Memo {
	return v.env.Once(gp1Key{f.ds}, func(ctx context.Context) any {
		r, err := OneLayerGP(ctx, f.ds, cmp.Or(v.env.BaselineIters, DefaultBaselineIters))
		if err != nil {
			return math.NaN()
		}
		return r
	})
}

type gp1Key struct{ ds *dataset.Dataset }
