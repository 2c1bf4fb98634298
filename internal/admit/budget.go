package admit

import (
	"fmt"
	"runtime"
	"time"

	"dgpviz/internal/allviews"
	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
)

// Budget defaults: a session within every other limit (2,000 rows, six
// layers of width 8, 64 inducing points) was measured at 457 MB and 3
// iterations a second, and sixteen of them at 5.1 GB; these refuse such
// configurations with a clear error instead.
const (
	DefaultSessionMemory = 256 << 20 // bytes one session may be estimated to use
	DefaultServerMemory  = 1 << 30   // bytes all sessions together
	DefaultMaxIterTime   = time.Second
	// SessionStates is how many model-sized states a session keeps besides
	// the optimizer's vectors: the live model, the frame writer's snapshot,
	// the message figure's copy and the state before a drag.
	SessionStates = 4
	// GCHeadroom: the Go heap grows to about twice the live data between
	// collections (GOGC=100), a little more while a collection runs: the
	// peak heap of sessions of 200–800 MiB was 2.1–2.5 times what they
	// held when idle (TestEstimateMatchesHeap).
	GCHeadroom = 2.25
)

// Estimate is what a configuration is expected to cost a session.
type Estimate struct {
	Bytes int64 // heap while it runs, including the undo history and the collector's headroom
	// Build is the heap while its model is built: a view's preset fits
	// restarts side by side (EstimateSession).
	Build    int64
	IterTime time.Duration // one optimizer iteration on one core of a busy machine
}

// EstimateConfig estimates the cost of running configuration c on data set rows
// (n inputs of width q, outputs of width d) from a single start, in a view
// that holds nothing of its own.
func EstimateConfig(c Config, n, q, d int) Estimate { return EstimateIn(c, n, q, d, 0, 0) }

// EstimateSession estimates the cost of a session of configuration c on
// n rows of data set ds (edited, the working rows differ) in the view the
// data's shape chooses: a view with a preset builds its models from
// restarts (view.Arch.Restarts), side by side, and keeps them; a view that
// analyses every row for its frames holds that prediction
// (view.RowAnalyzer).
func EstimateSession(c Config, ds *dataset.Dataset, n, q, d int) Estimate {
	v := allviews.For(ds, nil)
	restarts := 0
	if a, ok := v.Preset(nil); ok {
		restarts = a.Restarts
	}
	return EstimateIn(c, n, q, d, restarts, view.AnalyzedRows(v, ds))
}

// EstimateStarted is EstimateSession for a session that starts from a
// model it is given (a loaded model file, a fork), without restarts.
func EstimateStarted(c Config, ds *dataset.Dataset, n, q, d int) Estimate {
	return EstimateIn(c, n, q, d, 0, view.AnalyzedRows(allviews.For(ds, nil), ds))
}

// Bounds of the undo history. A state holds the model's parameters
// (at the limits, 6 layers of 64 inducing points and width 8: about
// 1.6 MB) and, when a data edit made them, the data.
const (
	MaxHistory      = 100      // edits that can be undone
	MaxHistoryBytes = 64 << 20 // bytes of model and data held for undo and redo
)

// perSession is what a session holds whatever its model: its goroutines,
// the socket's buffers, queues, the last frame and setup.
const perSession = 1 << 20

// EstimateIn is the estimate of a session of c on n rows (inputs of
// width q, outputs of width d) that keeps the models of restarts restarts
// and whose view predicts analyzed rows for its frames
// (view.AnalyzedRows).
func EstimateIn(c Config, n, q, d, restarts, analyzed int) Estimate {
	widths := append(append([]int{q}, c.Hidden...), d)
	// The data are held by the session (its working copy) and by the
	// model, copied once per start (train.Initialize; a preset's restarts
	// each, which it keeps); published snapshots and undo states share
	// them (engine.Model.CloneParams): every other state is parameters.
	data := int64(8 * n * (q + d))
	copies := int64(1 + max(1, restarts))
	params := engine.ModelBytes(n, widths, c.Inducing) - data
	history := min(int64(MaxHistory)*params, MaxHistoryBytes) // undo states, when a person has made that many edits
	kept := int64(restarts) * params                          // the restarts' models
	var analysis int64
	if analyzed > 0 {
		analysis = engine.EstimatePredict(analyzed, widths, c.Inducing)
	}
	// The trainer's evaluators and vectors (the second evaluation of the
	// bound alone is train.Trainer.Evaluation's, of a model the optimizer
	// has not evaluated: after an edit).
	it := train.EstimateIter(c.LiveMethod(n), n, widths, c.Inducing, params)
	cost := it.Full
	live := perSession + it.Evals + copies*data + SessionStates*params + it.Vectors + history + kept + analysis
	e := Estimate{
		Bytes:    int64(GCHeadroom * float64(live)),
		IterTime: it.Time,
	}
	e.Build = e.Bytes
	if restarts > 1 {
		// Restarts fit side by side (train.FitRestarts: as many as there
		// are cores), each with its own evaluator, optimizer and copy of
		// the data; then one more evaluator scores them.
		par := int64(min(restarts, runtime.GOMAXPROCS(0)))
		build := perSession + copies*data + par*(cost.Bytes+it.Vectors) + kept + cost.Bytes
		e.Build = max(e.Bytes, int64(GCHeadroom*float64(build)))
	}
	return e
}

// CheckBudget refuses a configuration whose estimate exceeds the
// per-session budgets, saying what it would take and what to reduce.
func CheckBudget(e Estimate, l Limits) error {
	if l.SessionMemory > 0 && e.Bytes > l.SessionMemory {
		return fmt.Errorf("this model would need about %s of memory, more than a session may use (%s): use fewer inducing points, fewer or narrower hidden layers, or fewer data (the server's -session-memory raises the limit)", MiB(e.Bytes), MiB(l.SessionMemory))
	}
	if l.MaxIterTime > 0 && e.IterTime > l.MaxIterTime {
		return fmt.Errorf("one optimizer iteration of this model would take about %s, more than the limit %s: use fewer inducing points, fewer or narrower hidden layers, or fewer data (the server's -max-iter-time raises the limit)", e.IterTime.Round(time.Millisecond), l.MaxIterTime)
	}
	return nil
}

// MiB formats b as whole mebibytes, rounded up.
func MiB(b int64) string { return fmt.Sprintf("%d MiB", (b+(1<<20)-1)>>20) }

// MemoryLimit returns the Go memory limit (debug.SetMemoryLimit) that
// makes real memory follow the server's budget: its memory budget with a
// fifth more for what no reservation counts (frames being encoded, the
// runtime's own), so that the collector works harder as the heap nears
// the budget rather than letting it grow to twice the live data. ok is
// false when there is no budget, or when env (the GOMEMLIMIT environment
// variable) already sets one.
func MemoryLimit(l Limits, env string) (int64, bool) {
	if l.ServerMemory <= 0 || env != "" {
		return 0, false
	}
	return l.ServerMemory + l.ServerMemory/5, true
}

// FitWithin returns c, a configuration for a session on data set ds, or,
// when c is over the budgets of l, c with the most inducing points that
// are within them (train's cost model), with a note for people that says
// so: rather than a refusal of the data. It returns c's estimate.
func FitWithin(c Config, ds *dataset.Dataset, l Limits) (Config, Estimate, string, error) {
	n, q := ds.X.Dims()
	_, dy := ds.Y.Dims()
	e := EstimateSession(c, ds, n, q, dy)
	err := CheckBudget(e, l)
	if err == nil {
		return c, e, "", nil
	}
	within := func(k int) bool {
		ck := c
		ck.Inducing = k
		return CheckBudget(EstimateSession(ck, ds, n, q, dy), l) == nil
	}
	k, ok := train.InducingWithin(c.Inducing-1, within)
	if !ok {
		return c, e, "", err
	}
	note := fmt.Sprintf("%d inducing points per layer instead of %d, the most within what a session may use (the server's -session-memory and -max-iter-time raise the limits)", k, c.Inducing)
	c.Inducing = k
	return c, EstimateSession(c, ds, n, q, dy), note, nil
}
