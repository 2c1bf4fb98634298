package train

import "fmt"

// Method is an optimisation method, as in gonum/optimize, which separates
// the method from the problem: the Trainer is the problem's side (the
// model's bound, its parametrisation and recovery from failed
// evaluations), a Method chooses the steps. There is one type per method,
// LBFGS, Adam and SVI; a nil Method in a TrainerConfig is LBFGS. The set
// is closed (the unexported methods): a method steps the trainer's own
// state.
type Method interface {
	// String returns the method's name as the command line and the
	// protocol spell it: "lbfgs", "adam" or "svi".
	String() string
	// MarshalText writes the name (for JSON reports).
	MarshalText() ([]byte, error)

	// defaults fills in the method's own defaults of c.
	defaults(c *TrainerConfig)
	// fullData reports whether every step of c's fit of n rows is
	// computed on all of them, so that the final layer's q(u) can be kept
	// at its optimum.
	fullData(c TrainerConfig, n int) bool
	// startGradient reports whether the full-data evaluation of a
	// starting point takes the gradient (SVI's steps take theirs on
	// minibatches).
	startGradient() bool
	// ownWindow reports whether the method measures the stopping rule's
	// rise itself (SVI, over its full-data checks) rather than over the
	// trainer's window of accepted iterations.
	ownWindow() bool
	// iterate performs one iteration from the trainer's last good point,
	// which start has evaluated.
	iterate(t *Trainer) StepInfo
}

// LBFGS is limited-memory BFGS on the full data (Nocedal & Wright, 2006,
// Algorithm 7.4) with a weak-Wolfe line search. The default.
type LBFGS struct{}

// Adam is Adam (Kingma & Ba, 2015), on minibatches when
// TrainerConfig.BatchSize is set.
type Adam struct{}

// SVI is stochastic variational inference (Hensman, Fusi & Lawrence, 2013)
// on minibatches of TrainerConfig.BatchSize rows (default
// DefaultStochasticBatch): every layer's q(u) is stepped by natural
// gradients, the other parameters by Adam, and the full-data bound,
// computed in chunks now and then, decides the step sizes and when to stop
// (optim_svi.go). For data above StochasticRows rows.
type SVI struct{}

func (LBFGS) String() string { return "lbfgs" }
func (Adam) String() string  { return "adam" }
func (SVI) String() string   { return "svi" }

func (m LBFGS) MarshalText() ([]byte, error) { return []byte(m.String()), nil }
func (m Adam) MarshalText() ([]byte, error)  { return []byte(m.String()), nil }
func (m SVI) MarshalText() ([]byte, error)   { return []byte(m.String()), nil }

// Methods are the methods, in the order the command line lists them.
var Methods = []Method{LBFGS{}, Adam{}, SVI{}}

// ParseMethod returns the method named s ("lbfgs", "adam" or "svi"; "" is the
// default, LBFGS).
func ParseMethod(s string) (Method, error) {
	if s == "" {
		return LBFGS{}, nil
	}
	for _, m := range Methods {
		if s == m.String() {
			return m, nil
		}
	}
	return nil, fmt.Errorf("optimizer %q: want lbfgs, adam or svi", s)
}

// MethodVar holds a Method where a concrete variable is decoded: a
// command-line flag (flag.TextVar) or a JSON field.
type MethodVar struct{ Method }

// MarshalText writes the method's name; nil is LBFGS's.
func (v MethodVar) MarshalText() ([]byte, error) {
	if v.Method == nil {
		return LBFGS{}.MarshalText()
	}
	return v.Method.MarshalText()
}

// UnmarshalText reads a method's name.
func (v *MethodVar) UnmarshalText(b []byte) error {
	m, err := ParseMethod(string(b))
	if err != nil {
		return err
	}
	v.Method = m
	return nil
}

func (LBFGS) defaults(*TrainerConfig)          {}
func (LBFGS) fullData(TrainerConfig, int) bool { return true }
func (LBFGS) startGradient() bool              { return true }
func (LBFGS) ownWindow() bool                  { return false }
func (LBFGS) iterate(t *Trainer) StepInfo      { return t.lbfgsStep() }

func (Adam) defaults(*TrainerConfig)              {}
func (Adam) fullData(c TrainerConfig, n int) bool { return c.BatchSize <= 0 || c.BatchSize >= n }
func (Adam) startGradient() bool                  { return true }
func (Adam) ownWindow() bool                      { return false }
func (Adam) iterate(t *Trainer) StepInfo          { return t.adamStep() }

func (SVI) defaults(c *TrainerConfig) {
	if c.BatchSize == 0 {
		c.BatchSize = DefaultStochasticBatch
	}
}
func (SVI) fullData(TrainerConfig, int) bool { return false }
func (SVI) startGradient() bool              { return false }
func (SVI) ownWindow() bool                  { return true }
func (SVI) iterate(t *Trainer) StepInfo      { return t.sviStep() }

// method returns c's method, LBFGS when none is set.
func (c TrainerConfig) method() Method {
	if c.Method == nil {
		return LBFGS{}
	}
	return c.Method
}

// isSVI reports whether c's method is SVI.
func (c TrainerConfig) isSVI() bool {
	_, ok := c.Method.(SVI)
	return ok
}
