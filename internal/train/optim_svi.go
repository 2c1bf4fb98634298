package train

import (
	"fmt"
	"math"

	"dgpviz/internal/engine"
)

// Stochastic variational inference for the nested bound (Method SVI;
// Hensman, Fusi & Lawrence, 2013; Salimbeni, Eleftheriadis & Hensman,
// 2018, for natural gradients alongside Adam).
//
// Each step draws the next minibatch of a seeded shuffled pass over the
// data and evaluates the bound's estimate on it: the likelihood and
// per-datum penalties scaled by N/batch, the KL terms whole
// (engine.Options.Rows), an unbiased estimate of the bound and its
// gradient. Then
//
//   - every layer's q(u), the final one included, takes a natural-gradient
//     step (natSteps, in the whitened coordinates): the final layer's of
//     size γ = sviGammaFinal (conjugate: on all the data the step of size 1
//     is its optimum); the hidden layers' of sviGammaHidden, within a trust
//     region of sviTrustHidden per entry, since their natural gradients can
//     be huge (a step of size 1e-4 on a walk of 90,000 rows moved entries
//     by 1.9 and cost the bound a factor five);
//   - the likelihood's noise variance steps by γ towards its optimum given
//     the rest (optimalNoise), in its logarithm;
//   - the rest (kernels, hidden layers' noise, inducing inputs) takes an
//     Adam step of TrainerConfig.LearningRate.
//
// The step sizes need no tuning on the presets: both rise log-linearly
// from 1/100 over the first sviWarmup steps (the first minibatches'
// gradients are far from the optimum's and Adam's first steps are full
// size in every coordinate) and then stay, and both are halved whenever a
// check finds no rise, a schedule that decays only as far as the noise
// demands.
//
// The check: every CheckEvery steps (Window, and at least one pass) the
// full-data bound is computed without gradient, in chunks
// (engine.Evaluator.EvaluateChunked). A check that finds a higher bound
// than the best so far keeps the point; one that does not returns to the
// best point and halves the step sizes. The stopping rule is the
// trainer's (TrainerConfig.RuleLimit) on the best checked bound: its rise
// over the last sviChecks checks, projected over Horizon steps
// (StepInfo.Rise, Expected). Since a check's bound is exact, not an
// estimate, the noise of the steps cannot stop a fit early; it can only
// halve the step sizes, until they are small enough for the rise to show.
// Step sizes halved more than sviMaxHalvings times end the fit as
// Stationary.

// Defaults of the stochastic fit.
const (
	// DefaultStochasticBatch is SVI's minibatch size when
	// TrainerConfig.BatchSize is 0.
	DefaultStochasticBatch = 1024
	// StochasticRows is the largest number of rows ChooseMethod fits on
	// the full data (L-BFGS, today's path). On a generated walk SVI
	// reached the full-batch fit's held-out error sooner at every size
	// measured, 1,800 to 90,000 rows; the threshold keeps the robot's and
	// the Frey faces' data (215 and 1,965 rows), whose presets were
	// measured with the full batch, and autoencoders of their size, where
	// SVI is not yet compared (docs/measurements.md, "Stochastic fits of
	// a long walk").
	StochasticRows = 5_000

	sviGammaFinal  = 0.2  // natural-gradient step size of the final layer's q(u)
	sviGammaHidden = 0.1  // of the hidden layers' (non-conjugate: Salimbeni et al., 2018)
	sviTrustHidden = 1.0  // trust region of the hidden layers' steps, at the full step size
	sviWarmup      = 20   // steps of the log-linear warm-up of the step sizes
	sviChecks      = 2    // checks the stopping rule's rise spans
	sviMaxHalvings = 12   // halvings of the step sizes that end a fit (Stationary)
	sviMinChunk    = 4096 // rows per chunk of a check's evaluation, at least
)

// sviState is the SVI schedule and checks, kept across steps.
type sviState struct {
	steps   int     // SVI steps since the last rebuild (the warm-up's clock)
	since   int     // steps since the last check
	rows    int     // rows the minibatches covered since the last new model (Epochs)
	best    float64 // best full-data bound at a check; NaN before the first
	bestRes *engine.Result
	// bestModel is a copy of the model at the best check (its parameters,
	// the data shared), made at the check and never written: Checked.
	bestModel *engine.Model
	bestIter  int
	uBest     []float64 // the free parameters there
	hist      []float64 // best after each of the last sviChecks+1 checks (a ring)
	nHist     int
	step      []float64 // natural-gradient steps, laid out as the trainer's w
	gamma     []float64 // per layer
	trust     []float64 // per layer: the largest entry of a step (natSteps)
}

func (s *sviState) reset(nw int) {
	s.steps, s.since, s.nHist = 0, 0, 0
	s.best, s.bestRes, s.uBest = math.NaN(), nil, nil
	s.bestModel, s.bestIter = nil, 0
	s.hist = make([]float64, sviChecks+1)
	s.step = make([]float64, nw)
}

// sviQ reports whether an SVI trainer steps parameter info by natural
// gradients: every layer's q(u), when neither q_mu nor q_sqrt is frozen
// (else Adam steps the free one).
func (t *Trainer) sviQ(info engine.ParamInfo) bool {
	return t.sviNatural() && (info.Group == engine.GroupQMu || info.Group == engine.GroupQSqrt)
}

// sviNatural reports whether an SVI trainer steps q(u) by natural
// gradients, which need both its mean and its covariance free.
func (t *Trainer) sviNatural() bool {
	return t.cfg.isSVI() && !t.cfg.Frozen[engine.GroupQMu] && !t.cfg.Frozen[engine.GroupQSqrt]
}

// ChooseMethod returns the method a fit of n rows uses by default: LBFGS
// on the full data up to StochasticRows rows, SVI above.
func ChooseMethod(n int) Method {
	if n > StochasticRows {
		return SVI{}
	}
	return LBFGS{}
}

// CheckEvery is the number of steps between an SVI fit's checks of the
// full-data bound on n rows: Window, and at least one pass over the data
// (1 for the other methods, whose every step is checked).
func (c TrainerConfig) CheckEvery(n int) int {
	if !c.isSVI() || c.BatchSize <= 0 {
		return 1
	}
	return max(c.Window, (n+c.BatchSize-1)/c.BatchSize)
}

// RiseSpan is the number of iterations over which the stopping rule
// measures the rise of the bound (StepInfo.Rise) of a fit on n rows:
// Window, or for SVI sviChecks checks.
func (c TrainerConfig) RiseSpan(n int) int {
	if !c.isSVI() {
		return c.Window
	}
	return sviChecks * c.CheckEvery(n)
}

// sviStep performs one SVI step (see above).
func (t *Trainer) sviStep() StepInfo {
	nAll, _ := t.m.X.Dims()
	s := &t.svi
	if math.IsNaN(s.best) {
		// The starting point, evaluated on all the data by start, is the
		// first check.
		s.best, s.bestRes = -t.f, t.lastRes
		s.uBest = append(s.uBest[:0], t.u...)
		s.bestModel, s.bestIter = t.m.CloneParams(), t.iter
		t.sviRecord()
	}
	var rows []int
	b := nAll
	if t.cfg.BatchSize < nAll {
		rows = t.nextBatch(nAll)
		b = len(rows)
	}
	fb, err := t.eval(t.u, t.g, rows, true)
	if err != nil {
		return t.sviDiverged(fmt.Sprintf("diverged (%s)", failureKind(err)), 1)
	}
	// q(u): natural gradients of the whitened gradient at u.
	warm := math.Pow(100, math.Min(1, float64(s.steps+1)/sviWarmup)-1)
	nl := len(t.m.Layers)
	s.gamma, s.trust = s.gamma[:0], s.trust[:0]
	for i := range nl {
		g, r := sviGammaHidden, sviTrustHidden*warm*t.lrMul
		if i == nl-1 {
			g, r = sviGammaFinal, math.Inf(1)
		}
		if !t.sviNatural() {
			g = 0
		}
		s.gamma = append(s.gamma, g*warm*t.lrMul)
		s.trust = append(s.trust, r)
	}
	t.natSteps(t.gfull, s.gamma, s.trust, s.step)
	// The rest: Adam.
	a := &t.adam
	a.t++
	lr := t.cfg.LearningRate * warm * t.lrMul
	c1 := 1 - math.Pow(adamBeta1, float64(a.t))
	c2 := 1 - math.Pow(adamBeta2, float64(a.t))
	_, _, dOut := t.m.Layers[nl-1].Dims()
	for k, g := range t.g {
		i := t.free[k]
		if t.isQ[k] {
			t.ut[k] = t.u[k] + s.step[i]
			continue
		}
		if info := t.layout[i]; info.Layer == nl-1 && info.Group == engine.GroupNoise {
			if opt := optimalNoise(t.w[i], t.gfull[i], nAll*dOut); opt > 0 {
				// A step of size γ towards it, in the logarithm.
				rho := math.Min(1, sviGammaFinal*warm*t.lrMul)
				t.ut[k] = (1-rho)*t.u[k] + rho*math.Log(opt)
				continue
			}
		}
		a.m[k] = adamBeta1*a.m[k] + (1-adamBeta1)*g
		a.v[k] = adamBeta2*a.v[k] + (1-adamBeta2)*g*g
		t.ut[k] = t.u[k] - lr*(a.m[k]/c1)/(math.Sqrt(a.v[k]/c2)+adamEps)
	}
	if err := t.setU(t.ut); err != nil {
		return t.sviDiverged(fmt.Sprintf("diverged (%s)", failureKind(err)), 1)
	}
	copy(t.u, t.ut)
	t.iter++
	s.steps++
	s.since++
	s.rows += b
	info := StepInfo{Iter: t.iter, Bound: -fb, Estimate: true, Evals: 1, Rise: math.NaN(), Expected: math.NaN()}
	if s.since >= t.cfg.CheckEvery(nAll) {
		t.sviCheck(&info)
	}
	info.Epochs = float64(s.rows) / float64(nAll)
	return info
}

// optimalNoise returns the likelihood's noise variance that maximises the
// bound given the rest of the model, from its value s2 and the bound's
// derivative g there, for n·d outputs in all. The bound depends on it as
// −(n·d/2)·log s² − R/(2s²) (the likelihood, and the final layer's
// compression and propagation, which are variances over s²), so g =
// −n·d/(2s²) + R/(2s⁴) gives R and the optimum R/(n·d) = s² + 2s⁴g/(n·d).
// From a minibatch's estimate of g it is an unbiased estimate; it may be
// ≤ 0 when the estimate is poor.
func optimalNoise(s2, g float64, nd int) float64 {
	return s2 + 2*s2*s2*g/float64(nd)
}

// sviCheck evaluates the full-data bound at the current point, keeps it
// when it is the best so far or else returns to the best and halves the
// step sizes, and fills info's Bound, Rise and Expected.
func (t *Trainer) sviCheck(info *StepInfo) {
	s := &t.svi
	s.since = 0
	info.Evals++
	chunk := max(t.cfg.BatchSize, sviMinChunk)
	// ΣΨ2 in float64 however Kuu is conditioned: its rounding, ~1e-9 of
	// the bound (TestMinibatchRounding), is far below the stopping rule's
	// tolerance (DefaultTol, 1e-6 of it), and the double-double sums were
	// most of a check's time at 60 inducing points (docs/measurements.md).
	var res *engine.Result
	var err error
	if t.cfg.Evaluator != nil {
		res, _, err = t.cfg.Evaluator.EvaluateAll(t.m, engine.Options{NoOutputMessage: true, NoCompensation: true})
	} else {
		res, _, err = t.ev.EvaluateChunked(t.m, engine.Options{NoOutputMessage: true, NoCompensation: true}, chunk)
	}
	if err == nil {
		if math.IsNaN(res.Bound) || math.IsInf(res.Bound, 0) {
			err = fmt.Errorf("the bound is not finite (%v): %w", res.Bound, engine.ErrNotFinite)
		} else {
			err = res.Precise()
		}
	}
	switch {
	case err != nil:
		*info = t.sviDiverged(fmt.Sprintf("the check diverged (%s)", failureKind(err)), info.Evals)
		return
	case res.Bound > s.best:
		s.best, s.bestRes = res.Bound, res
		copy(s.uBest, t.u)
		s.bestModel, s.bestIter = t.m.CloneParams(), t.iter
		t.lastRes, t.evalOK = res, true
	default:
		info.Event = fmt.Sprintf("no rise since the best check (bound %.6g): back to it, step sizes halved", res.Bound)
		t.sviRevert()
		t.lrMul /= 2
	}
	t.f = -s.best
	info.Bound, info.Estimate = s.best, false
	info.Rise, info.Expected = t.sviRecord()
	if t.sviHalvings() > sviMaxHalvings {
		info.Status = Stationary
	}
}

// sviDiverged returns to the best checked point after a failed
// evaluation, halves the step sizes and restarts Adam's moments.
func (t *Trainer) sviDiverged(why string, evals int) StepInfo {
	t.sviRevert()
	t.diverged()
	info := StepInfo{Iter: t.iter, Bound: t.svi.best, Evals: evals, Rise: math.NaN(), Expected: math.NaN(),
		Event: fmt.Sprintf("%s: back to the best check, step sizes halved", why)}
	if t.sviHalvings() > sviMaxHalvings {
		info.Status = Stationary
	}
	return info
}

// sviRevert sets the model to the best checked point. The stopping rule's
// rise starts afresh: the checks since the best are no evidence of
// convergence, only of step sizes too large.
func (t *Trainer) sviRevert() {
	s := &t.svi
	s.nHist = 0
	copy(t.u, s.uBest)
	t.setU(t.u) // evaluated before: it factorises
	t.lastRes, t.evalOK = s.bestRes, s.bestRes != nil
}

// sviKeepBest sets an interrupted SVI fit's model to its best checked
// point, the last one known good, and rep's bound to its bound.
func (t *Trainer) sviKeepBest(rep *FitReport) {
	if !t.cfg.isSVI() || math.IsNaN(t.svi.best) || t.svi.since == 0 {
		return
	}
	t.sviRevert()
	t.svi.since = 0
	rep.Bound = t.svi.best
}

// sviHalvings is how many times the step sizes were halved.
func (t *Trainer) sviHalvings() int { return int(math.Round(-math.Log2(t.lrMul))) }

// sviRecord adds the best checked bound to the ring and returns its rise
// over the last sviChecks checks and that rise projected over Horizon
// steps (NaN, NaN until as many checks were made).
func (t *Trainer) sviRecord() (rise, expected float64) {
	s := &t.svi
	r := len(s.hist)
	s.hist[s.nHist%r] = s.best
	s.nHist++
	if s.nHist < r {
		return math.NaN(), math.NaN()
	}
	rise = s.best - s.hist[s.nHist%r] // the best sviChecks checks ago
	n, _ := t.m.X.Dims()
	return rise, rise * float64(t.cfg.Horizon) / float64(t.cfg.RiseSpan(n))
}

// Checked returns an SVI fit's best checked point: a copy of the model
// there (its parameters; the data shared), the full-data evaluation of
// it and the iteration of the check. ok is false for the other methods,
// and before the first step of a new model or configuration. Between
// checks the model steps on minibatches, and this is the latest model
// whose bound is known exactly: a live view shows it, with the steps'
// estimates beside it, rather than evaluate every row for every picture.
// The copy is the trainer's own and is never written; a caller that
// edits it must copy it first.
func (t *Trainer) Checked() (m *engine.Model, res *engine.Result, iter int, ok bool) {
	s := &t.svi
	if !t.cfg.isSVI() || s.bestModel == nil || s.bestRes == nil {
		return nil, nil, 0, false
	}
	return s.bestModel, s.bestRes, s.bestIter, true
}
