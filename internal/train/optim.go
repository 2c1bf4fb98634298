package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/linalg"

	"gonum.org/v1/gonum/mat"
)

// Optimizer defaults and safeguards.
const (
	// DefaultLearningRate is Adam's step size when TrainerConfig gives none.
	DefaultLearningRate = 0.01
	// MaxJitter is the largest jitter the trainer raises Kuu's diagonal to
	// when a Cholesky factorisation fails.
	MaxJitter = 1e-2
	// FullBoundRows is the largest number of data for which minibatch Adam
	// reports the full-data bound after each step (one extra evaluation
	// without gradient). Above it StepInfo.Bound is the minibatch estimate.
	FullBoundRows = 4096
	// DefaultTolDatum, DefaultTolAbs, DefaultTol, DefaultWindow and
	// DefaultHorizon are the stopping rule a person would choose: stop
	// when the improvement still expected is not worth the wait. The rate
	// at which the best bound rose over the last DefaultWindow accepted
	// iterations, projected over the next DefaultHorizon, is below
	// DefaultTolDatum nats per datum (an observed value: a row's output)
	// per minute those iterations take (TrainerConfig.IterTime, the cost
	// model's time), DefaultTolAbs nats or DefaultTol of the bound,
	// whichever is largest.
	//
	// Per datum, because the bound is a sum over the data: a rise of τ
	// nats per datum is a rise of τ in the mean log density of each
	// observed value, which for a Gaussian likelihood at its fitted noise
	// is a fall of about τ in the log of the fit's RMSE on the data. Per
	// minute, because what a person decides is whether to wait: the robot
	// model's bound goes on rising about 0.3 % per datum for every 1000
	// iterations (3 s) long after its held-out error has stopped falling,
	// and the Frey faces' 2 % for every 1000 iterations (90 s) with the
	// held-out reconstruction flat from the 50th (docs/fitting.md, "The
	// stopping rule", has where it stops the step, robot and Frey fits).
	// For the step data (30 data, 0.34 ms an iteration) the limit is the
	// 0.01 nats of DefaultTolAbs, as before.
	DefaultTolDatum = 0.04
	DefaultTolAbs   = 0.01
	DefaultTol      = 1e-6
	DefaultWindow   = 100
	DefaultHorizon  = 1000

	maxLineEvals = 30   // trial points per line search
	armijoC1     = 1e-4 // sufficient decrease (Nocedal & Wright, 2006, §3.1)
	wolfeC2      = 0.9  // curvature condition for quasi-Newton methods (ibid.)
	// maxStepInf bounds a trial step in the transformed parameters (∞-norm):
	// a log-parameter changes by at most a factor e³ ≈ 20 per iteration,
	// an inducing input or variational mean by 3 normalised units.
	maxStepInf = 3.0
	gradTol    = 1e-9 // ∞-norm of the transformed gradient at which L-BFGS has converged
	// freshIters is how many accepted iterations L-BFGS makes after a new
	// model or configuration (a person's edit, say) before it may report
	// convergence: the edited state alone is no evidence of an optimum.
	// Only a steepest-descent step that finds no decrease twice in a row
	// (a true stationary point) ends it sooner.
	freshIters = 5
	adamBeta1  = 0.9 // Kingma & Ba (2015) defaults
	adamBeta2  = 0.999
	adamEps    = 1e-8
)

// lbfgsMemory is the number of L-BFGS correction pairs. Nocedal & Wright
// (2006, §7.2) find 3…20 enough; these bounds measured otherwise: to the
// 3-layer step model's −0.12 from 3 starts 2091–2729 evaluations and one
// start never with 10, 403–1247 with 100 and 511–1028 with 200; to the
// robot model's −5145 (with natural gradients) 1430–2928 and one start
// never with 10, 487–1199 with 100 (TestOptimizerStudy). The memory costs
// 2·lbfgsMemory vectors of the free parameters (14 MB for the Frey
// preset's ~9000) and ~4·lbfgsMemory of their multiply-adds per iteration,
// against an evaluation's hundreds of thousands. A variable for the study.
var lbfgsMemory = 100

// TrainerConfig configures a Trainer.
type TrainerConfig struct {
	Method       Method                // LBFGS{} (nil is LBFGS), Adam{} or SVI{}
	LearningRate float64               // adam step size, in SVI too (default 0.01)
	BatchSize    int                   // minibatch size; 0 = full batch (Adam), DefaultStochasticBatch (SVI)
	Frozen       map[engine.Group]bool // frozen parameter groups
	Seed         uint64                // minibatch sampling
	Workers      int                   // engine.Evaluator workers (0 = GOMAXPROCS)
	// TolDatum, TolAbs, Tol, Window and Horizon are the stopping rule
	// (defaults DefaultTolDatum, DefaultTolAbs, DefaultTol, DefaultWindow,
	// DefaultHorizon): Step reports FunctionConvergence once the best
	// bound's rise over the last Window accepted iterations without a
	// divergence event, projected over the next Horizon
	// (StepInfo.Expected), is below RuleLimit (StepInfo.Limit):
	// max(TolDatum·data·minutes, TolAbs, Tol·|bound|) for the data's
	// number of observed values and the minutes Horizon iterations take
	// (IterTime). The window starts afresh after a new model or
	// configuration (a person's edit), so the test never fires right after
	// one.
	TolDatum float64
	TolAbs   float64
	Tol      float64
	Window   int
	Horizon  int
	// ExplicitFinalQ optimises the final layer's q(u) as parameters, as
	// every other layer's. By default, on the full data and with neither
	// q_mu nor q_sqrt frozen, it is kept at its optimum given everything
	// else instead (engine.Options.OptimalFinalQ): its M·D·(M+3)/2
	// parameters — most of the robot's and Frey's — leave the optimizer's
	// problem, and after every evaluation the model holds the optimum.
	ExplicitFinalQ bool
	// NaturalGradient steps the hidden layers' q(u) by natural gradients
	// (Salimbeni et al., 2018) within each L-BFGS step, whose line search
	// scales both (optim_natgrad.go; L-BFGS only). Off by default: it
	// reaches the robot model's bounds in fewer evaluations but the step
	// model's in far more (docs/measurements.md).
	NaturalGradient bool
	// Evaluator evaluates the bound and its gradient, of all the data and
	// of minibatches: nil is the Trainer's own engine.Evaluator
	// (EvaluateAll), or the evaluation can be the sum of shards of the
	// data on other processes (internal/shards).
	Evaluator Evaluator
}

// An Evaluator evaluates the bound of a model's data, or a minibatch's
// estimate of it (engine.Options.Rows), as engine.Evaluator.EvaluateAll
// does (TrainerConfig.Evaluator).
type Evaluator interface {
	EvaluateAll(m *engine.Model, opt engine.Options) (*engine.Result, *engine.Gradient, error)
}

// StepInfo reports one optimizer iteration.
type StepInfo struct {
	Iter  int     // iterations done so far
	Bound float64 // bound after this step
	// Estimate is true when Bound is a minibatch estimate of the bound (Adam
	// with a minibatch on more than FullBoundRows data; SVI between its
	// checks, the estimate at the step's start) rather than the full-data
	// bound.
	Estimate bool
	// Epochs is the number of passes over the data the minibatches of an
	// SVI fit have made (0 for the other methods).
	Epochs float64
	// Event is "" or a human message about divergence handling, e.g.
	// "diverged (NaN bound): reverted, jitter raised to 1e-05".
	Event  string
	Status Status // NotTerminated, or why stepping again cannot help
	Evals  int    // bound evaluations this step took
	// GradNorm is the ∞-norm of the gradient of the objective in the
	// optimizer's coordinates at the current point (Adam: of its last
	// minibatch).
	GradNorm float64
	// Rise is how far the best bound rose over the last Window iterations
	// (TrainerConfig), and Expected that rate projected over the next
	// Horizon: the stopping rule's measure. Both are NaN until the window
	// has filled since the last new model, configuration or divergence.
	// Limit is the rule's tolerance (TrainerConfig.RuleLimit): the fit has
	// converged once Expected is at most Limit.
	Rise, Expected, Limit float64
}

// Trainer optimises a model's parameters one iteration at a time, so that
// an outside driver can pause, step, resume and change the configuration
// between steps.
//
// Positive parameters (kernel hyperparameters, noise variances) are
// optimised as their logarithms and the diagonals of the q_sqrt factors as
// the logarithms of their magnitudes, so they can never reach zero; the
// other parameters are optimised as they are. The objective is the negative
// bound. A trial point whose evaluation fails (Kuu not positive definite, a
// non-finite bound) is treated as infinitely bad: the step shrinks, and if
// no step succeeds the trainer reverts to the last good parameters, resets
// its memory and, for Cholesky failures, raises the model's jitter.
//
// A Trainer is not safe for concurrent use.
type Trainer struct {
	cfg TrainerConfig
	m   *engine.Model
	ev  engine.Evaluator
	// shown evaluates the model as it stands for a live view
	// (Evaluation), with workspace of its own: ev's is kept for the
	// optimizer's loop (gradients, minibatches).
	shown engine.Evaluator

	layout []engine.ParamInfo
	nat    []float64 // natural parameters of m, all of them
	w      []float64 // the optimizer's coordinates (see optim_whiten.go), all of them
	white  []whiteLayer
	gfull  []float64 // gradient of the bound, natural, all parameters
	free   []int     // indices into nat of the optimised parameters

	have bool      // f, g valid at u
	u    []float64 // transformed free parameters at the last good point
	f    float64   // objective (−bound) at u
	g    []float64 // gradient of f w.r.t. u
	iter int

	// startEvent: the events of a Start (a raised jitter), reported with
	// the next Step's.
	startEvent string

	// Line search scratch.
	ut, gt, ulo, glo, dir []float64
	// uPrev is the point before an Adam step whose full-data bound was not
	// evaluated (unchecked), to revert to if the next batch fails.
	uPrev     []float64
	unchecked bool

	lb    lbfgsMemoryState
	adam  adamState
	rng   *rand.Rand
	perm  []int
	pos   int
	rows  []int
	lrMul float64 // learning-rate multiplier after divergences (≤ 1)

	fresh int // accepted iterations since the last rebuild (freshIters)
	stuck int // consecutive steepest-descent steps without decrease

	// best holds the best bound after each of the last Window accepted
	// iterations, for the convergence test.
	best bestWindow

	// lastRes is the last full-data evaluation; evalOK says that the model
	// is still at its parameters (see LastEvaluation).
	lastRes *engine.Result
	evalOK  bool

	// optQ: the final layer's q(u) is kept at its optimum (see
	// TrainerConfig.ExplicitFinalQ); its natural parameters are
	// nat[qLo:qHi], outside the free set. Each evaluation computes it
	// afresh; the points the optimizer may return to keep theirs: qU at
	// u, qLast at the last evaluation, qLow at ulo.
	optQ            bool
	qLo, qHi        int
	qU, qLast, qLow []float64

	// ng: natural-gradient steps for the hidden layers' q(u) (free
	// parameters with isQ), which L-BFGS's memory leaves out; gU is the
	// whitened gradient of all parameters at u (valid when gUOK).
	ng   bool
	gU   []float64
	gUOK bool
	isQ  []bool

	svi sviState // SVI's schedule and checks (optim_svi.go)
}

type lbfgsMemoryState struct {
	s, y   [][]float64
	rho    []float64
	alpha  []float64
	n, top int // stored pairs; index of the next slot
}

type adamState struct {
	m, v []float64
	t    int
}

// NewTrainer returns a trainer for m, which it takes ownership of.
func NewTrainer(m *engine.Model, cfg TrainerConfig) (*Trainer, error) {
	if err := checkConfig(&cfg); err != nil {
		return nil, err
	}
	t := &Trainer{cfg: cfg, lrMul: 1}
	t.rng = rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	if err := t.SetModel(m); err != nil {
		return nil, err
	}
	return t, nil
}

// Check reports whether c is a valid configuration.
func (c TrainerConfig) Check() error { return checkConfig(&c) }

// Defaults returns c with its zero fields set to the defaults, or an error
// if c is invalid.
func (c TrainerConfig) Defaults() (TrainerConfig, error) {
	err := checkConfig(&c)
	return c, err
}

func checkConfig(cfg *TrainerConfig) error {
	if cfg.Method == nil {
		cfg.Method = LBFGS{}
	}
	if cfg.LearningRate == 0 {
		cfg.LearningRate = DefaultLearningRate
	}
	if !finitePositive(cfg.LearningRate) {
		return fmt.Errorf("learning rate %v must be finite and > 0", cfg.LearningRate)
	}
	if cfg.BatchSize < 0 {
		return fmt.Errorf("batch size %d must be ≥ 0", cfg.BatchSize)
	}
	cfg.Method.defaults(cfg)
	if cfg.Workers < 0 {
		return fmt.Errorf("workers %d must be ≥ 0", cfg.Workers)
	}
	if cfg.TolAbs == 0 {
		cfg.TolAbs = DefaultTolAbs
	}
	if cfg.TolDatum == 0 {
		cfg.TolDatum = DefaultTolDatum
	}
	if !(cfg.TolDatum > 0) || math.IsInf(cfg.TolDatum, 0) {
		return fmt.Errorf("tolerance %v nats per datum per minute must be finite and > 0", cfg.TolDatum)
	}
	if cfg.Tol == 0 {
		cfg.Tol = DefaultTol
	}
	if cfg.Window == 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.Horizon == 0 {
		cfg.Horizon = DefaultHorizon
	}
	if !(cfg.Tol > 0) || math.IsInf(cfg.Tol, 0) {
		return fmt.Errorf("relative tolerance %v must be finite and > 0", cfg.Tol)
	}
	if !(cfg.TolAbs > 0) || math.IsInf(cfg.TolAbs, 0) {
		return fmt.Errorf("tolerance %v nats must be finite and > 0", cfg.TolAbs)
	}
	if cfg.Window < 1 || cfg.Window > 1_000_000 {
		return fmt.Errorf("window %d, want 1…1000000", cfg.Window)
	}
	if cfg.Horizon < 1 || cfg.Horizon > 1_000_000_000 {
		return fmt.Errorf("horizon %d, want 1…1000000000", cfg.Horizon)
	}
	frozen := make(map[engine.Group]bool, len(cfg.Frozen))
	for g, v := range cfg.Frozen {
		if g < engine.GroupKernel || g > engine.GroupQSqrt {
			return fmt.Errorf("unknown parameter group %d", int(g))
		}
		if v {
			frozen[g] = true
		}
	}
	cfg.Frozen = frozen
	return nil
}

// Config returns the trainer's configuration, with defaults filled in.
func (t *Trainer) Config() TrainerConfig {
	c := t.cfg
	c.Frozen = make(map[engine.Group]bool, len(t.cfg.Frozen))
	for g, v := range t.cfg.Frozen {
		c.Frozen[g] = v
	}
	return c
}

// Model returns the current model. It is live: the caller must not use it
// concurrently with Step, and should Clone it to keep a snapshot.
func (t *Trainer) Model() *engine.Model { return t.m }

// Iter returns the number of iterations done so far.
func (t *Trainer) Iter() int { return t.iter }

// SetIter sets the iteration count, for a trainer that carries on from an
// earlier one's model (a resumed session keeps counting).
func (t *Trainer) SetIter(n int) { t.iter = max(n, 0) }

// SetConfig changes the configuration between steps. Changing the method,
// the frozen groups or whether the final layer's q(u) is kept at its
// optimum resets the optimizer's memory; changing the learning rate or
// batch size otherwise does not.
func (t *Trainer) SetConfig(cfg TrainerConfig) error {
	if err := checkConfig(&cfg); err != nil {
		return err
	}
	old := t.cfg
	t.cfg = cfg
	t.ev.Workers = cfg.Workers
	if cfg.Seed != old.Seed {
		t.rng = rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
		t.perm = nil
	}
	if cfg.BatchSize != old.BatchSize {
		t.perm = nil
	}
	if cfg.LearningRate != old.LearningRate {
		t.lrMul = 1
	}
	nData, _ := t.m.X.Dims()
	if cfg.Method != old.Method || !sameFrozen(cfg.Frozen, old.Frozen) || cfg.KeepsFinalQOptimal(nData) != old.KeepsFinalQOptimal(nData) {
		t.rebuild()
	} else if cfg.Tol != old.Tol || cfg.TolAbs != old.TolAbs || cfg.TolDatum != old.TolDatum || cfg.Window != old.Window || cfg.Horizon != old.Horizon {
		t.best.reset()
	}
	return nil
}

func sameFrozen(a, b map[engine.Group]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for g := range a {
		if !b[g] {
			return false
		}
	}
	return true
}

// SetModel replaces the model (new parameters or a new architecture) and
// resets the optimizer's memory. The trainer takes ownership of m.
func (t *Trainer) SetModel(m *engine.Model) error {
	if m == nil {
		return errors.New("no model")
	}
	if err := m.Validate(); err != nil {
		return err
	}
	canonicalQSqrt(m)
	t.m, t.evalOK = m, false
	t.layout = m.ParamLayout()
	t.nat = m.Params(t.nat[:0])
	t.ev.Workers = t.cfg.Workers
	t.perm = nil
	t.svi.rows = 0
	t.rebuild()
	return nil
}

// canonicalQSqrt makes the diagonals of the q_sqrt factors positive by
// negating columns, which leaves S = L Lᵀ and so the bound unchanged.
func canonicalQSqrt(m *engine.Model) {
	for _, l := range m.Layers {
		for _, s := range l.QSqrt {
			r, _ := s.Dims()
			for j := 0; j < r; j++ {
				if s.At(j, j) < 0 {
					for i := j; i < r; i++ {
						s.Set(i, j, -s.At(i, j))
					}
				}
			}
		}
	}
}

// KeepsFinalQOptimal reports whether a trainer with configuration c keeps
// the final layer's q(u) of a model with n data at its optimum: on the full
// data, with q(u) neither frozen nor asked to be explicit. SVI never does:
// it steps the final q(u) by natural gradients.
func (c TrainerConfig) KeepsFinalQOptimal(n int) bool {
	return c.method().fullData(c, n) && !c.ExplicitFinalQ && !c.Frozen[engine.GroupQMu] && !c.Frozen[engine.GroupQSqrt]
}

// OptimalFinalQ reports whether the trainer keeps the final layer's q(u)
// at its optimum (TrainerConfig.ExplicitFinalQ).
func (t *Trainer) OptimalFinalQ() bool { return t.optQ }

// rebuild recomputes the free set from the model and the configuration and
// clears all optimizer memory; the next Step starts afresh.
func (t *Trainer) rebuild() {
	t.evalOK = false
	t.nat = t.m.Params(t.nat[:0])
	t.w = linalg.Resize(t.w, len(t.nat))
	nData, _ := t.m.X.Dims()
	t.optQ = t.cfg.KeepsFinalQOptimal(nData)
	last := len(t.m.Layers) - 1
	t.qLo, t.qHi = len(t.layout), len(t.layout)
	for i, info := range t.layout {
		if info.Layer == last && (info.Group == engine.GroupQMu || info.Group == engine.GroupQSqrt) {
			t.qLo = min(t.qLo, i)
		}
	}
	_, lbfgs := t.cfg.Method.(LBFGS)
	t.ng = t.cfg.NaturalGradient && lbfgs && len(t.m.Layers) > 1 && !t.cfg.Frozen[engine.GroupQMu] && !t.cfg.Frozen[engine.GroupQSqrt]
	t.gU = linalg.Resize(t.gU, len(t.layout))
	t.gUOK = false
	t.free = t.free[:0]
	t.isQ = t.isQ[:0]
	for i, info := range t.layout {
		if !t.cfg.Frozen[info.Group] && !(t.optQ && i >= t.qLo) {
			t.free = append(t.free, i)
			t.isQ = append(t.isQ, t.ng && hiddenQ(info, len(t.m.Layers)) || t.sviQ(info))
		}
	}
	nq := t.qHi - t.qLo
	t.qU = linalg.Resize(t.qU, nq)
	t.qLast = linalg.Resize(t.qLast, nq)
	t.qLow = linalg.Resize(t.qLow, nq)
	t.buildWhite()
	n := len(t.free)
	t.u = linalg.Resize(t.u, n)
	t.g = linalg.Resize(t.g, n)
	t.ut = linalg.Resize(t.ut, n)
	t.gt = linalg.Resize(t.gt, n)
	t.ulo = linalg.Resize(t.ulo, n)
	t.glo = linalg.Resize(t.glo, n)
	t.dir = linalg.Resize(t.dir, n)
	t.uPrev = linalg.Resize(t.uPrev, n)
	t.unchecked = false
	t.have = false
	t.fresh, t.stuck = 0, 0
	t.best.reset()
	t.resetMemory()
	t.svi.reset(len(t.w))
}

func (t *Trainer) resetMemory() {
	n := len(t.free)
	lb := &t.lb
	if len(lb.s) != lbfgsMemory || len(lb.s[0]) != n {
		lb.s = make([][]float64, lbfgsMemory)
		lb.y = make([][]float64, lbfgsMemory)
		for i := range lb.s {
			lb.s[i] = make([]float64, n)
			lb.y[i] = make([]float64, n)
		}
		lb.rho = make([]float64, lbfgsMemory)
		lb.alpha = make([]float64, lbfgsMemory)
	}
	lb.n, lb.top = 0, 0
	t.adam.m = linalg.Resize(t.adam.m, n)
	t.adam.v = linalg.Resize(t.adam.v, n)
	clear(t.adam.m)
	clear(t.adam.v)
	t.adam.t = 0
}

// toU maps a natural parameter to the optimised one.
func toU(p float64, info engine.ParamInfo) float64 {
	if info.Positive || info.Diagonal {
		return math.Log(math.Abs(p))
	}
	return p
}

// fromU maps an optimised parameter to the natural one and returns dp/du.
func fromU(u float64, info engine.ParamInfo) (p, dp float64) {
	if info.Positive || info.Diagonal {
		p = math.Exp(u)
		return p, p
	}
	return u, 1
}

// setU sets the model from the transformed free parameters u.
func (t *Trainer) setU(u []float64) error {
	t.evalOK = false
	for k, i := range t.free {
		t.w[i], _ = fromU(u[k], t.layout[i])
	}
	return t.unwhiten(t.w, t.nat)
}

// setPoint sets the model to a point the optimizer evaluated before: the
// free parameters u and, when the final layer's q(u) is kept at its
// optimum, the optimum q computed there (so that no q(u) of another point
// is left behind).
func (t *Trainer) setPoint(u, q []float64) {
	if t.optQ {
		copy(t.w[t.qLo:t.qHi], q) // natural: not whitened (buildWhite)
	}
	t.setU(u)
}

// eval sets the model to u and evaluates the objective f = −bound and, into
// g, its gradient w.r.t. u, on the given rows (nil: all data).
func (t *Trainer) eval(u, g []float64, rows []int, grad bool) (float64, error) {
	if err := t.setU(u); err != nil {
		return math.Inf(1), err
	}
	optQ := t.optQ && rows == nil
	// All the data in chunks above engine.ChunkAbove rows: the workspace
	// of a chunk, not of N.
	// A minibatch's estimate takes ΣΨ2 in float64 however Kuu is
	// conditioned (engine.Options.NoCompensation): its rounding is ~1e-5
	// of the sampling spread (TestMinibatchRounding). So does an SVI
	// fit's start, its first check (see sviCheck).
	plain := t.cfg.isSVI() && rows == nil && !grad
	if rows != nil && t.m.X != nil {
		n, _ := t.m.X.Dims()
		plain = len(rows) < n
	}
	ev := Evaluator(&t.ev)
	if t.cfg.Evaluator != nil {
		ev = t.cfg.Evaluator
	}
	res, gr, err := ev.EvaluateAll(t.m, engine.Options{Rows: rows, Gradient: grad, NoOutputMessage: true, OptimalFinalQ: optQ, NoCompensation: plain})
	if err != nil {
		return math.Inf(1), err
	}
	if optQ {
		// The model holds the optimum it was evaluated at.
		res.FinalQ.Apply(t.m.Layers[len(t.m.Layers)-1])
		t.qLast = t.m.Layers[len(t.m.Layers)-1].AppendQ(t.qLast[:0])
		copy(t.nat[t.qLo:t.qHi], t.qLast)
		copy(t.w[t.qLo:t.qHi], t.qLast)
	}
	if math.IsNaN(res.Bound) || math.IsInf(res.Bound, 0) {
		return math.Inf(1), fmt.Errorf("the bound is not finite (%v): %w", res.Bound, engine.ErrNotFinite)
	}
	// A trial point where the bound has lost its precision is a failed
	// evaluation; the starting point is taken as it is (an edit may land
	// there, and the steps away from it are checked).
	if t.have {
		if err := res.Precise(); err != nil {
			return math.Inf(1), err
		}
	}
	if rows == nil {
		t.lastRes, t.evalOK = res, true
	}
	if !grad {
		return -res.Bound, nil
	}
	t.gfull = gr.Flatten(t.gfull[:0])
	t.whiteGrad(t.w, t.gfull)
	for k, i := range t.free {
		_, dp := fromU(u[k], t.layout[i])
		g[k] = -t.gfull[i] * dp
		if math.IsNaN(g[k]) || math.IsInf(g[k], 0) {
			return math.Inf(1), fmt.Errorf("the gradient is not finite (%v): %w", g[k], engine.ErrNotFinite)
		}
	}
	return -res.Bound, nil
}

// failureKind names an evaluation failure for progress messages.
func failureKind(err error) string {
	switch {
	case errors.Is(err, engine.ErrNotPositiveDefinite):
		return "Kuu not positive definite"
	case errors.Is(err, engine.ErrNotFinite):
		return "NaN bound"
	case errors.Is(err, engine.ErrImprecise):
		return "bound lost its precision"
	default:
		return err.Error()
	}
}

// start evaluates the objective at the model's current parameters,
// raising the jitter while Kuu cannot be factorised.
func (t *Trainer) start() (string, int, error) {
	var events []string
	evals := 0
	for {
		t.nat = t.m.Params(t.nat[:0])
		err := t.whiten(t.nat, t.w)
		if err == nil {
			for k, i := range t.free {
				t.u[k] = toU(t.w[i], t.layout[i])
			}
			evals++
			var f float64
			grad := t.cfg.Method.startGradient()
			f, err = t.eval(t.u, t.g, nil, grad)
			if err == nil {
				t.f, t.have = f, true
				copy(t.qU, t.qLast)
				copy(t.gU, t.gfull)
				t.gUOK = grad
				return strings.Join(events, "; "), evals, nil
			}
			t.m.SetParams(t.nat) // as it was
			t.evalOK = false
		}
		if !errors.Is(err, engine.ErrNotPositiveDefinite) || t.m.Jitter >= MaxJitter {
			return strings.Join(events, "; "), evals, fmt.Errorf("cannot evaluate the model: %w", err)
		}
		t.m.Jitter = raiseJitter(t.m.Jitter)
		t.evalOK = false
		events = append(events, fmt.Sprintf("Kuu not positive definite: jitter raised to %.3g", t.m.Jitter))
	}
}

// Start evaluates the starting point on every row, as the next Step
// would first, unless that is done: LastEvaluation then has it. A live
// view that shows the model before its first step calls it instead of
// evaluating the model itself, so that SVI's start, which is that
// evaluation without a gradient, is not made twice (at a million rows
// each is seconds of CPU before the first picture). Its events (a raised
// jitter) come with the next Step's.
func (t *Trainer) Start() error {
	if t.have {
		return nil
	}
	e, _, err := t.start()
	t.startEvent = joinEvents(t.startEvent, e)
	return err
}

func raiseJitter(j float64) float64 {
	return math.Min(MaxJitter, math.Max(10*j, 1e-8))
}

// Step performs exactly one optimizer iteration. Evaluation failures are
// handled (and reported in StepInfo.Event); the error is only for states
// the trainer cannot recover from, such as a model that cannot be
// evaluated at all.
func (t *Trainer) Step() (info StepInfo, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the optimizer step failed: %v", r)
		}
	}()
	ev := t.startEvent
	t.startEvent = ""
	evals := 0
	if !t.have {
		// The full-data objective and gradient at the starting point.
		e, n, err := t.start()
		evals += n
		if err != nil {
			return StepInfo{Iter: t.iter, Bound: math.NaN(), Event: e, Evals: evals}, err
		}
		ev = joinEvents(ev, e)
	}
	if len(t.free) == 0 {
		return StepInfo{Iter: t.iter, Bound: -t.f, Event: joinEvents(ev, "all parameters frozen"), Status: AllFrozen, Evals: evals}, nil
	}
	info = t.cfg.Method.iterate(t)
	info.Event = joinEvents(ev, info.Event)
	info.Evals += evals
	info.GradNorm = normInf(t.g)
	if !t.cfg.Method.ownWindow() {
		info.Rise, info.Expected = t.recordWindow(info)
	}
	info.Limit = t.ruleLimit(info.Bound)
	if info.Status == NotTerminated && info.Expected <= info.Limit {
		info.Status = FunctionConvergence
	}
	if info.Status.Converged() && info.Status != AllFrozen {
		if why := Degeneracy(t.m); why != "" {
			info.Status = Degenerate
			info.Event = joinEvents(info.Event, why)
		}
	}
	return info, nil
}

// Degeneracy describes why m is a degenerate state the optimizer cannot
// leave, or returns "": inducing points of a layer that coincide (within
// 1e-6 relative), which have equal gradients and stay together, leaving
// Kuu singular but for the jitter.
func Degeneracy(m *engine.Model) string {
	for li, l := range m.Layers {
		mz, q, _ := l.Dims()
		z := l.InducingInputs
		for i := 0; i < mz; i++ {
			for j := i + 1; j < mz; j++ {
				var d2, n2 float64
				for c := 0; c < q; c++ {
					a, b := z.At(i, c), z.At(j, c)
					d2 += (a - b) * (a - b)
					n2 += a * a
				}
				if math.Sqrt(d2) <= 1e-6*(1+math.Sqrt(n2)) {
					return fmt.Sprintf("layer %d's inducing points %d and %d sit on one spot, and the optimizer cannot pull apart points with equal gradients: move or remove one of them (or undo)", li+1, i+1, j+1)
				}
			}
		}
	}
	return ""
}

// recordWindow records the step in the convergence window and returns the
// best bound's rise over the last Window iterations and that rate
// projected over the next Horizon (NaN, NaN until the window is full). A
// divergence event or a minibatch estimate empties the window: it is no
// evidence either way.
func (t *Trainer) recordWindow(info StepInfo) (rise, expected float64) {
	w := t.cfg.Window
	if info.Event != "" || info.Estimate {
		t.best.reset()
		return math.NaN(), math.NaN()
	}
	b := info.Bound
	if last, ok := t.best.last(w); ok {
		b = math.Max(b, last)
	}
	old, full := t.best.push(b, w) // the best Window iterations ago
	if !full {
		return math.NaN(), math.NaN()
	}
	rise = b - old
	return rise, rise * float64(t.cfg.Horizon) / float64(w)
}

// negligible reports whether an improvement expected of a bound b is
// within the stopping rule's tolerance (TrainerConfig.RuleLimit).
func (t *Trainer) negligible(expected, b float64) bool {
	return expected <= t.ruleLimit(b)
}

// ruleLimit is the stopping rule's tolerance for the trainer's model at
// a bound b.
func (t *Trainer) ruleLimit(b float64) float64 {
	return t.cfg.RuleLimit(b, Data(t.m.Y), t.cfg.IterTime(t.m))
}

// RuleLimit is the stopping rule's tolerance at a bound b of a model of
// data observed values (Data) whose iterations take iter each
// (IterTime): max(TolDatum·data·(Horizon·iter in minutes), TolAbs,
// Tol·|b|). A fit whose expected rise over the next Horizon iterations
// (StepInfo.Expected) is at most this has converged
// (FunctionConvergence).
func (c TrainerConfig) RuleLimit(b float64, data int, iter time.Duration) float64 {
	return max(c.TolDatum*float64(data)*float64(c.Horizon)*iter.Minutes(), c.TolAbs, c.Tol*math.Abs(b))
}

// Data is the number of observed values of outputs y, the data the bound
// sums over: its rows times its columns.
func Data(y *mat.Dense) int {
	if y == nil {
		return 0
	}
	r, c := y.Dims()
	return r * c
}

func joinEvents(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// nextBatch returns the next minibatch of a shuffled pass over the data.
func (t *Trainer) nextBatch(n int) []int {
	b := t.cfg.BatchSize
	if len(t.perm) != n {
		t.perm = make([]int, n)
		for i := range t.perm {
			t.perm[i] = i
		}
		t.pos = n
	}
	if t.pos+b > n {
		t.rng.Shuffle(n, func(i, j int) { t.perm[i], t.perm[j] = t.perm[j], t.perm[i] })
		t.pos = 0
	}
	t.rows = append(t.rows[:0], t.perm[t.pos:t.pos+b]...)
	t.pos += b
	return t.rows
}

func norm2(x []float64) float64 { return math.Sqrt(linalg.Dot(x, x)) }

// normInf returns max |x_i|: as the fold of math.Max, +Inf when x has an
// infinity and else NaN when it has a NaN, with one compare per entry.
func normInf(x []float64) float64 {
	var m float64
	nan := false
	for _, v := range x {
		if a := math.Abs(v); a > m {
			m = a
		} else if a != a {
			nan = true
		}
	}
	if nan && !math.IsInf(m, 1) {
		return math.NaN()
	}
	return m
}
