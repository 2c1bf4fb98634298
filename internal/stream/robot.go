package stream

import (
	"context"
	"math"
	"slices"
	"sync"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
	"dgpviz/internal/train"

	"gonum.org/v1/gonum/mat"
)

// The robot WiFi view. A data set with true positions (dataset.Positions,
// the robot loader's) gets:
//   - the preset "robot WiFi (paper)" (train.RobotPreset): time → 3 → 3 →
//     30, selected by the bound among short restarts when a model is built;
//   - a "robot" section in the setup (true path, test scans, fill-ins);
//   - frames built by robotFrame: the hidden layers' messages every frame
//     (a cheap forward pass, no Ψ₂), while the expensive analysis — the
//     bound with its per-datum penalties, the output layer's messages,
//     test-set predictions and the geometry scores — runs at most every
//     robotAnalysisEvery in the background and is sent with the next frame.

// RobotPresetName names the robot preset in the UI and the setup.
const RobotPresetName = "robot WiFi (paper)"

// IsRobot reports whether ds is robot WiFi data (it has true positions).
func IsRobot(ds *dataset.Dataset) bool {
	if ds == nil || ds.Positions == nil {
		return false
	}
	n, _ := ds.X.Dims()
	r, c := ds.Positions.Dims()
	return c == 2 && r >= n
}

// RobotConfig returns c with the robot preset's architecture: hidden 3,3
// and train.RobotInducing inducing points per layer (capped by limits).
func RobotConfig(c Config, l Limits) Config { return presetConfig(c, train.RobotPreset(c.Seed), l) }

// presetConfig returns c with preset p's architecture: its hidden widths
// and inducing points per layer (capped by limits).
func presetConfig(c Config, p train.Preset, l Limits) Config {
	c.Hidden = slices.Clone(p.Init.Hidden)
	c.Inducing = p.Init.Inducing
	if l.MaxInducing > 0 {
		c.Inducing = min(c.Inducing, l.MaxInducing)
	}
	return c
}

// robotInfo is what a robot data set adds to a session's data: the true
// positions and the test scans, fixed for the data set.
type robotInfo struct {
	ds         *dataset.Dataset
	nTrain     int
	pos        *mat.Dense // nTrain × 2, the training scans' true positions
	xTest      *mat.Dense // normalised test inputs (nil: no test set)
	yTestDBm   *mat.Dense // test outputs in dBm
	filled     [][]bool
	timeScore  latent.Score // the time-only baseline (latent.TimeFeatures)
	dbmScale   float64      // dBm = y_original·dbmScale + dbmOffset
	dbmOffset  float64
	normalizeY dataset.Normalizer
	// cache holds the server's baselines (the one-layer GP's test error).
	cache *baselineCache
}

func newRobotInfo(ds *dataset.Dataset, nx, ny dataset.Normalizer, cache *baselineCache) *robotInfo {
	if !IsRobot(ds) {
		return nil
	}
	n, _ := ds.X.Dims()
	r := &robotInfo{ds: ds, cache: cache, nTrain: n, pos: mat.DenseCopyOf(ds.Positions.Slice(0, n, 0, 2)), filled: ds.Filled,
		dbmScale: dataset.RobotUnscale(1) - dataset.RobotUnscale(0), dbmOffset: dataset.RobotUnscale(0), normalizeY: ny}
	if ds.XTest != nil {
		r.xTest = nx.Apply(ds.XTest)
		r.yTestDBm = mat.DenseCopyOf(ds.YTest)
		r.yTestDBm.Apply(func(_, _ int, v float64) float64 { return dataset.RobotUnscale(v) }, r.yTestDBm)
	}
	r.timeScore, _ = latent.LoopClosure(latent.TimeFeatures(n, 3), r.pos, latent.DefaultMinLag, latent.DefaultRadius)
	return r
}

// initModel builds the session's model for robot data: the preset's
// restart selection with cfg's architecture and seed. It also returns
// every restart (robot_restarts.go; nil for a single start).
func (r *robotInfo) initModel(ctx context.Context, x, y *mat.Dense, cfg Config, workers int) (*engine.Model, *restartSet, error) {
	p := train.RobotPreset(cfg.Seed)
	p.Init.Hidden, p.Init.Inducing = slices.Clone(cfg.Hidden), cfg.Inducing
	if len(cfg.Hidden) == 0 {
		p.Restarts = 1
	}
	tcfg := train.TrainerConfig{Method: train.LBFGS, Seed: cfg.Seed, Workers: max(workers, 1)}
	m, reps, err := p.Start(ctx, x, y, tcfg, nil)
	if err != nil {
		return m, nil, err
	}
	return m, buildRestarts(m, reps, r.pos), nil
}

// rmseDBm is the root mean squared error, in dBm, of predictions mean
// (normalised units, nTest × d) against the test scans.
func (r *robotInfo) rmseDBm(mean *mat.Dense) float64 {
	if r.yTestDBm == nil || mean == nil {
		return math.NaN()
	}
	n, d := r.yTestDBm.Dims()
	if mr, mc := mean.Dims(); mr != n || mc != d {
		return math.NaN()
	}
	var s float64
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			orig := mean.At(i, j)*r.normalizeY.Scale[j] + r.normalizeY.Mean[j]
			e := orig*r.dbmScale + r.dbmOffset - r.yTestDBm.At(i, j)
			s += e * e
		}
	}
	return math.Sqrt(s / float64(n*d))
}

// robotBaselines are the test-set errors of simple predictors, computed
// once per data set in the background.
type robotBaselines struct {
	mu   sync.Mutex
	done chan struct{} // closed when GP1DBm is final
	// MeanDBm predicts every test scan by the training mean of each access
	// point; GP1DBm by a one-layer sparse GP from time to the 30 signals.
	MeanDBm, GP1DBm float64
}

// baselineCache holds a server's robot baselines, one per data set, fitted
// in the background under the server's context: Shutdown cancels and
// waits for them, and each Server has its own (and its own iterations).
type baselineCache struct {
	ctx   context.Context
	iters int // the one-layer GP's L-BFGS iterations
	wg    sync.WaitGroup
	mu    sync.Mutex
	m     map[*dataset.Dataset]*robotBaselines
}

func newBaselineCache(ctx context.Context, iters int) *baselineCache {
	return &baselineCache{ctx: ctx, iters: iters, m: map[*dataset.Dataset]*robotBaselines{}}
}

// baselines returns the data set's baselines, starting their computation
// on first use; check done before reading the fields.
func (r *robotInfo) baselines() *robotBaselines {
	c := r.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.m[r.ds]
	if b == nil {
		b = &robotBaselines{done: make(chan struct{}), GP1DBm: math.NaN()}
		b.MeanDBm = math.NaN()
		if r.xTest != nil {
			nt, d := r.yTestDBm.Dims()
			b.MeanDBm = r.rmseDBm(mat.NewDense(nt, d, nil)) // normalised 0 = the training mean
		}
		c.m[r.ds] = b
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			r.computeBaselines(b)
		}()
	}
	return b
}

func (r *robotInfo) computeBaselines(b *robotBaselines) {
	gp1 := math.NaN()
	defer func() {
		b.mu.Lock()
		b.GP1DBm = gp1
		b.mu.Unlock()
		close(b.done)
	}()
	if r.xTest == nil {
		return
	}
	x, y := dataset.FitNormalizer(r.ds.X), r.normalizeY
	xn, yn := x.Apply(r.ds.X), y.Apply(r.ds.Y)
	m, err := train.Initialize(xn, yn, train.InitConfig{Inducing: train.RobotInducing, Seed: 1})
	if err != nil {
		return
	}
	fm, _, err := train.Fit(r.cache.ctx, m, train.TrainerConfig{Workers: 1}, train.FitOptions{MaxIters: r.cache.iters})
	if err != nil {
		return
	}
	ev := engine.Evaluator{Workers: 1}
	msgs, err := ev.Predict(fm, r.xTest)
	if err != nil {
		return
	}
	gp1 = r.rmseDBm(msgs[len(msgs)-1].Mean)
}

// robotSet is the setup's "robot" section.
type robotSet struct {
	Preset     string `json:"preset"`
	NAll       int    `json:"n_all"`            // training + test scans
	NTrain     int    `json:"n_train"`          // the first n_train scans are the training set
	Positions  Ref    `json:"positions"`        // n_all × 2 true x, y (metres), training scans first
	XTest      *Ref   `json:"x_test,omitempty"` // (n_all − n_train) normalised test inputs
	YTest      *Ref   `json:"y_test,omitempty"` // (n_all − n_train) × d test outputs, normalised like y
	Filled     Ref    `json:"filled"`           // n_all × d: 1 where the reading is a -92 dBm fill-in
	DBmScale   num    `json:"dbm_scale"`        // dBm = original·dbm_scale + dbm_offset
	DBmOffset  num    `json:"dbm_offset"`       //
	MissingDBm num    `json:"missing_dbm"`
	TimeScore  num    `json:"time_score"` // LoopClosure of the time-only latent (TimeFeatures(n, 3))
	MinLag     int    `json:"min_lag"`
	Radius     num    `json:"radius"`
	Revisits   int    `json:"revisits"`
	FarPairs   int    `json:"far_pairs"`
	// RevisitPairs are the revisits themselves among the training scans
	// (latent.Revisits: the pairs the geometry score uses), flattened
	// i0, j0, i1, j1, …
	RevisitPairs Ref `json:"revisit_pairs"`
}

func (r *robotInfo) setup(e *encoder, ny dataset.Normalizer) *robotSet {
	nAll, _ := r.ds.Positions.Dims()
	_, d := r.ds.Y.Dims()
	s := &robotSet{
		Preset: RobotPresetName, NAll: nAll, NTrain: r.nTrain, Positions: e.arr(denseData(r.ds.Positions)),
		DBmScale: num(r.dbmScale), DBmOffset: num(r.dbmOffset), MissingDBm: dataset.RobotMissingDBm,
		TimeScore: num(r.timeScore.Value), MinLag: latent.DefaultMinLag, Radius: latent.DefaultRadius,
		Revisits: r.timeScore.Revisits, FarPairs: r.timeScore.FarPairs,
	}
	var pairs []float64
	for _, p := range latent.Revisits(r.pos, latent.DefaultMinLag, latent.DefaultRadius) {
		pairs = append(pairs, float64(p[0]), float64(p[1]))
	}
	s.RevisitPairs = e.arr(pairs)
	if r.xTest != nil {
		xt, yt := e.arr(denseData(r.xTest)), e.arr(denseData(ny.Apply(r.ds.YTest)))
		s.XTest, s.YTest = &xt, &yt
	}
	f := make([]float64, nAll*d)
	for i := 0; i < nAll && i < len(r.filled); i++ {
		for j := 0; j < d && j < len(r.filled[i]); j++ {
			if r.filled[i][j] {
				f[i*d+j] = 1
			}
		}
	}
	s.Filled = e.arr(f)
	return s
}
