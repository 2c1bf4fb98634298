package train

import "fmt"

// Status says why an optimisation stopped, or that it has not.
type Status int

const (
	// NotTerminated: the optimiser can make progress; step again.
	NotTerminated Status = iota
	// GradientThreshold: L-BFGS's step left the gradient's ∞-norm below
	// its tolerance (or did not decrease the objective), after at least
	// the fresh-start iterations.
	GradientThreshold
	// Stationary: steepest descent found no decrease, twice in a row or
	// after the fresh-start iterations: a numerical optimum.
	Stationary
	// AllFrozen: every parameter group is frozen, there is nothing to
	// optimise.
	AllFrozen
	// FunctionConvergence: the improvement still expected is negligible:
	// the best bound's rise over the last TrainerConfig.Window iterations,
	// projected over the next Horizon, is below TrainerConfig.RuleLimit
	// (the stopping rule, StepInfo.Expected).
	FunctionConvergence
	// IterationLimit: Run made MaxIters iterations.
	IterationLimit
	// Failure: the model could not be evaluated even at the largest
	// jitter; the parameters are the last good ones.
	Failure
	// Degenerate: the optimizer stopped at a state it cannot leave by
	// itself, such as inducing points that sit on one spot (their
	// gradients are equal, so it cannot pull them apart); StepInfo.Event
	// says which and what to do.
	Degenerate
)

var statusNames = [...]string{
	NotTerminated:       "not terminated",
	GradientThreshold:   "gradient threshold",
	Stationary:          "stationary",
	AllFrozen:           "all parameters frozen",
	FunctionConvergence: "function convergence",
	IterationLimit:      "iteration limit",
	Failure:             "failure",
	Degenerate:          "degenerate",
}

// String describes the status in words, for reports.
func (s Status) String() string {
	if s < 0 || int(s) >= len(statusNames) {
		return fmt.Sprintf("Status(%d)", int(s))
	}
	return statusNames[s]
}

// Explain says what the status means for the fit, for people, after its
// name (viz fit's last lines); String is the name, in files and on the page.
func (s Status) Explain() string {
	switch s {
	case NotTerminated:
		return "the optimizer can still make progress"
	case GradientThreshold:
		return "the gradient is below the optimizer's tolerance: an optimum"
	case Stationary:
		return "no step along the gradient raises the bound any more: an optimum to working precision"
	case AllFrozen:
		return "there is nothing to optimise"
	case FunctionConvergence:
		return "the rise still expected is negligible"
	case IterationLimit:
		return "the bound may still rise"
	case Failure:
		return "the model could not be evaluated; the last good parameters are kept"
	case Degenerate:
		return "a state the optimizer cannot leave by itself"
	}
	return s.String()
}

// Converged reports whether the status is an optimum of some kind
// (gradient threshold, stationary point, function convergence, or nothing
// left to optimise), as opposed to running, a limit or a failure.
func (s Status) Converged() bool {
	switch s {
	case GradientThreshold, Stationary, AllFrozen, FunctionConvergence:
		return true
	}
	return false
}

// Terminated reports whether stepping again cannot make progress.
func (s Status) Terminated() bool { return s != NotTerminated }

// MarshalText writes the status in words (for JSON reports).
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a status written by MarshalText.
func (s *Status) UnmarshalText(b []byte) error {
	for v, name := range statusNames {
		if string(b) == name {
			*s = Status(v)
			return nil
		}
	}
	return fmt.Errorf("unknown status %q", b)
}
