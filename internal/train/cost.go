package train

import (
	"time"

	"dgpviz/internal/engine"
)

// The cost model of a fit: what one optimizer iteration takes, in time
// and in the trainer's memory, from the engine's estimate of one
// evaluation (engine.EstimateCost).
const (
	// FlopsPerSecond is the engine's rate in estimated flops on one core
	// of a busy machine: on a 2-core machine with other work running,
	// 1.5e9–2.0e9/s measured for the robot shape, the Frey shape, and
	// N=2000, M=64 with one and five hidden layers of width 8 (3.9e9/s for
	// the robot shape when the machine is quiet).
	FlopsPerSecond = 2e9
	// EvalsPerIteration: an L-BFGS iteration's line search takes 1.2
	// evaluations on average on the step and robot fits (StepInfo.Evals).
	EvalsPerIteration = 1.3
	// trainerVectors is the optimizer's vectors of parameter length: its
	// coordinates, gradients and line-search points (about 12) and
	// L-BFGS's 10 correction pairs (20).
	trainerVectors = 32
)

// IterCost is what one optimizer iteration of a model is expected to
// cost.
type IterCost struct {
	// Full is one evaluation on every row; Step one of an iteration's
	// evaluations (a minibatch's for SVI, else Full).
	Full, Step engine.Cost
	// Evals is the bytes of the evaluators' buffers a trainer holds while
	// it steps: one evaluation with the gradient and two of the bound
	// alone (its line search's, measured 1.9–2.1 times one with the
	// gradient after five steps of 2,000-row models with one, three and
	// five hidden layers, and a caller's of a model the optimizer has not
	// evaluated); an SVI trainer's minibatch evaluations and one chunked
	// evaluation of every row for its checks.
	Evals int64
	// Vectors is the bytes of the optimizer's vectors, for a model of
	// params bytes of parameters (EstimateIter's argument).
	Vectors int64
	// Time is one iteration on one core of a busy machine.
	Time time.Duration
}

// EstimateIter estimates an iteration of method on n rows of a model of
// the given layer widths (inputs first) and m inducing points per layer,
// whose parameters take params bytes.
func EstimateIter(method Method, n int, widths []int, m int, params int64) IterCost {
	return estimateIter(method, n, DefaultStochasticBatch, widths, m, params)
}

// estimateIter is EstimateIter with SVI's minibatches of batch rows.
func estimateIter(method Method, n, batch int, widths []int, m int, params int64) IterCost {
	c := IterCost{Full: engine.EstimateCost(n, widths, m)}
	c.Step = c.Full
	c.Evals = c.Full.Bytes + 2*c.Full.Forward
	if _, ok := method.(SVI); ok {
		// An SVI step evaluates a minibatch, not every row, and its
		// checks, once in many steps, the bound alone on every row in
		// chunks.
		c.Step = engine.EstimateCost(min(n, batch), widths, m)
		c.Evals = c.Step.Bytes + 2*c.Step.Forward + c.Full.Forward
	}
	c.Vectors = trainerVectors * params
	c.Time = time.Duration(c.Step.Flops * EvalsPerIteration / FlopsPerSecond * float64(time.Second))
	return c
}

// InducingWithin returns the most inducing points per layer, at most m,
// of a model that fits a budget (fits reports whether k inducing points
// do), or false when not even one does. A model's memory and time grow
// with its inducing points (EstimateIter, engine.EstimateCost), so the
// largest within a budget is found by bisection: log₂ m estimates.
func InducingWithin(m int, fits func(k int) bool) (int, bool) {
	if m < 1 || !fits(1) {
		return 0, false
	}
	lo, hi := 1, m+1 // fits(lo); hi does not fit, or is past m
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, true
}

// IterTime is the cost model's time of one iteration of a trainer of
// configuration c on m (EstimateIter, at the most inducing points of any
// of m's layers): the clock of the stopping rule's tolerance per datum,
// which, unlike a measured time, is the same on every machine and every
// run, so that a seeded fit stops where it stopped before.
func (c TrainerConfig) IterTime(m *engine.Model) time.Duration {
	n, q := m.X.Dims()
	widths := []int{q}
	mm := 1
	for _, l := range m.Layers {
		k, _, d := l.Dims()
		widths = append(widths, d)
		mm = max(mm, k)
	}
	batch := c.BatchSize
	if batch <= 0 {
		batch = DefaultStochasticBatch
	}
	return estimateIter(c.method(), n, batch, widths, mm, 0).Time
}
