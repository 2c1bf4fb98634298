package train

import (
	"context"
	"dgpviz/internal/engine"
	"dgpviz/internal/turn"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// DefaultMaxIters is Fit's iteration cap: generous, since the trainer's
// convergence test (TrainerConfig.Tol, Window) decides when a fit is done.
const DefaultMaxIters = 20000

// FitOptions control Fit.
type FitOptions struct {
	// MaxIters is the iteration limit (default DefaultMaxIters). The
	// trainer's stopping rule (TrainerConfig.TolAbs, Tol, Window, Horizon)
	// stops a fit sooner.
	MaxIters int
	// Progress, if not nil, is called after every iteration.
	Progress func(StepInfo)
	// Checked, if not nil, is called after every check of an SVI fit
	// with the best checked model (Trainer.Checked), which the caller
	// must not change, and the check's step: a held-out trace of the fit
	// (viz fit -trace) judges the model the fit would return if it
	// stopped there.
	Checked func(m *engine.Model, s StepInfo)
}

// FitReport summarises a fit.
type FitReport struct {
	Iters  int
	Bound  float64
	Status Status   // why the fit stopped (Converged() when not by MaxIters or failure)
	Events []string // the divergence events, in order
	Evals  int      // bound evaluations
	// Rise and Expected are the last iteration's: how far the best bound
	// rose over the last TrainerConfig.RiseSpan iterations and that rate
	// projected over the next Horizon (NaN before a window has filled),
	// and Limit the stopping rule's tolerance (StepInfo.Limit).
	Rise, Expected, Limit float64
	// Epochs is the passes over the data an SVI fit's minibatches made.
	Epochs float64
}

func (o FitOptions) withDefaults() (FitOptions, error) {
	if o.MaxIters == 0 {
		o.MaxIters = DefaultMaxIters
	}
	switch {
	case o.MaxIters < 0:
		return o, fmt.Errorf("%d iterations, want ≥ 0", o.MaxIters)
	}
	return o, nil
}

// Fit optimises m (which it takes ownership of) until convergence, the
// iteration limit or the context's cancellation, and returns the fitted
// model. On cancellation it returns the model so far with the context's
// error.
func Fit(ctx context.Context, m *engine.Model, cfg TrainerConfig, opt FitOptions) (*engine.Model, FitReport, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, FitReport{}, err
	}
	t, err := NewTrainer(m, cfg)
	if err != nil {
		return nil, FitReport{}, err
	}
	return t.Run(ctx, opt)
}

// Run steps the trainer until convergence, opt.MaxIters further iterations
// or the context's cancellation (see Fit).
func (t *Trainer) Run(ctx context.Context, opt FitOptions) (*engine.Model, FitReport, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, FitReport{}, err
	}
	rep := FitReport{Rise: math.NaN(), Expected: math.NaN()}
	for k := 0; k < opt.MaxIters; k++ {
		// Each iteration is one turn of ctx's work (a server shares its
		// cores among its clients' background fits this way); the
		// context's end stops the fit between iterations.
		done, err := turn.Take(ctx)
		if err != nil {
			t.sviKeepBest(&rep)
			return t.m, rep, err
		}
		info, err := t.Step()
		done()
		rep.Evals += info.Evals
		rep.Iters = info.Iter
		rep.Bound = info.Bound
		if !info.Estimate {
			// An SVI fit's estimates between its checks leave the
			// last check's.
			rep.Rise, rep.Expected, rep.Limit = info.Rise, info.Expected, info.Limit
		}
		rep.Epochs = info.Epochs
		if info.Event != "" {
			rep.Events = append(rep.Events, info.Event)
		}
		if opt.Progress != nil {
			opt.Progress(info)
		}
		if opt.Checked != nil && !info.Estimate {
			if m, _, _, ok := t.Checked(); ok {
				opt.Checked(m, info)
			}
		}
		if err != nil {
			return t.m, rep, err
		}
		if info.Status.Terminated() {
			rep.Status = info.Status
			break
		}
	}
	if rep.Status == NotTerminated {
		rep.Status = IterationLimit
		if t.cfg.isSVI() && t.have && t.svi.since > 0 {
			// The fit ends at its best checked point, as when it stops
			// by itself.
			var info StepInfo
			t.sviCheck(&info)
			rep.Bound, rep.Evals = info.Bound, rep.Evals+info.Evals
			if !math.IsNaN(info.Rise) {
				rep.Rise, rep.Expected, rep.Limit = info.Rise, info.Expected, t.ruleLimit(info.Bound)
			}
		}
	}
	if !t.have {
		// MaxIters 0: report the starting bound.
		if _, n, err := t.start(); err == nil {
			rep.Bound = -t.f
			rep.Evals += n
		}
	}
	return t.m, rep, nil
}

// RestartReport is one restart's outcome in FitRestarts.
type RestartReport struct {
	Restart int
	Init    InitConfig // the initialisation used (defaults filled in)
	Report  FitReport
	Err     error // initialisation or fit failure; the restart is skipped
	// Model is the restart's fitted model (nil when it failed). The best
	// restart's is the model FitRestarts returns, the same pointer: clone
	// before handing either to a Trainer, which changes it.
	Model *engine.Model
}

// FitRestarts initialises and fits restarts ≥ 1 models and returns the one
// with the best bound (the first among equals), its index and every
// restart's report. Restart r uses icfg with Seed icfg.Seed+r and, for
// r > 0 and icfg.Perturb 0, Perturb DefaultPerturb; when icfg.HiddenInit
// is "auto" and the model has hidden layers, restart 1 starts the first
// hidden layer from the other choice (pca vs linear), so that both kinds of
// local optimum are compared by their bounds. Restarts run concurrently on
// up to GOMAXPROCS goroutines; the result does not depend on that number.
// When ctx is cancelled it returns the best model so far (nil if none) with
// an error that wraps ctx.Err().
// progress, if not nil, is called after each iteration of each restart,
// never concurrently.
func FitRestarts(ctx context.Context, x, y *mat.Dense, icfg InitConfig, tcfg TrainerConfig, opt FitOptions, restarts int, progress func(restart int, s StepInfo)) (*engine.Model, int, []RestartReport, error) {
	if restarts < 1 {
		return nil, -1, nil, fmt.Errorf("%d restarts, want ≥ 1", restarts)
	}
	base, err := icfg.withDefaults()
	if err != nil {
		return nil, -1, nil, err
	}
	if _, err := opt.withDefaults(); err != nil {
		return nil, -1, nil, err
	}
	if err := checkConfig(&tcfg); err != nil {
		return nil, -1, nil, err
	}
	reps := make([]RestartReport, restarts)
	models := make([]*engine.Model, restarts)
	var mu sync.Mutex
	par := min(restarts, runtime.GOMAXPROCS(0))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for r := range restarts {
		c := base
		c.Seed = base.Seed + uint64(r)
		if r > 0 && icfg.Perturb == 0 {
			c.Perturb = DefaultPerturb
		}
		if r == 1 && base.HiddenInit == "auto" && len(base.Hidden) > 0 {
			_, q := x.Dims()
			c.HiddenInit = "pca"
			if base.Hidden[0] != q {
				c.HiddenInit = "linear"
			}
			// Perturbed like the others, so that the seed matters for
			// every restart but the canonical first.
		}
		reps[r] = RestartReport{Restart: r, Init: c}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var m *engine.Model
			var ierr error
			err := turn.Do(ctx, func() { m, ierr = Initialize(x, y, c) })
			if err == nil {
				err = ierr
			}
			if err != nil {
				reps[r].Err = err
				return
			}
			tc := tcfg
			if tc.Workers == 0 {
				tc.Workers = max(1, runtime.GOMAXPROCS(0)/par)
			}
			o := opt
			if progress != nil {
				o.Progress = func(s StepInfo) {
					mu.Lock()
					defer mu.Unlock()
					progress(r, s)
				}
			}
			if opt.Checked != nil {
				o.Checked = func(m *engine.Model, s StepInfo) {
					mu.Lock()
					defer mu.Unlock()
					opt.Checked(m, s)
				}
			}
			fm, rep, err := Fit(ctx, m, tc, o)
			reps[r].Report = rep
			if err != nil && (ctx.Err() == nil || fm == nil) {
				reps[r].Err = err
				return
			}
			// An interrupted restart keeps its last good model.
			models[r] = fm
			reps[r].Model = fm
		}()
	}
	wg.Wait()
	best := -1
	var errs []error
	for r, rep := range reps {
		if rep.Err != nil {
			errs = append(errs, fmt.Errorf("restart %d: %w", r, rep.Err))
			continue
		}
		if best < 0 || rep.Report.Bound > reps[best].Report.Bound {
			best = r
		}
	}
	if err := ctx.Err(); err != nil {
		// Interrupted: the best model so far, if any, with the reason.
		if best < 0 {
			return nil, -1, reps, err
		}
		return models[best], best, reps, fmt.Errorf("fit interrupted: %w", err)
	}
	if best < 0 {
		return nil, -1, reps, fmt.Errorf("every restart failed: %w", errors.Join(errs...))
	}
	return models[best], best, reps, nil
}
