package train

import "math"

// The live pace's rule. A live view runs the optimizer as fast as it can
// until the bound settles, then at the session's speed, so that a class
// sees a converged picture within a second or two of opening the demo or
// of an edit, and then the fine changes at a pace one can follow
// (docs/measurements.md, "Live pace"). Settling is the stopping rule's
// looser sibling, measured on the same window of best bounds (bestWindow):
// the bound has settled when its best value rose by less than
// settleNats·(1 + |bound|/settleScale) over the last SettleWindow
// iterations. On the step demo (30 points) the bound rises by 0.05 nats
// per 100 iterations at about iteration 1000, where it is within 0.04 nats
// of the optimizer's final −0.754. A bound that rises unsettleBy times
// faster again (the optimizer left a plateau) unsettles it.
const (
	SettleWindow = 100   // iterations
	settleNats   = 0.05  // nats per SettleWindow
	settleScale  = 5000. // a bound of −5000 nats settles at twice the rise
	unsettleBy   = 4     // hysteresis: unsettled at this many times the rise
)

// Settler follows the bound of a live fit's iterations since the last new
// or edited model and says whether it has settled. The zero value is
// ready to use.
type Settler struct {
	settled bool
	started bool       // best is valid (the zero value is a reset one)
	best    float64    // the best bound since the last reset
	w       bestWindow // best after each of the last SettleWindow iterations
}

// Reset starts afresh: a new or edited model.
func (s *Settler) Reset() {
	s.settled, s.started, s.best = false, true, math.Inf(-1)
	s.w.reset()
}

// Settled reports whether the bound has settled.
func (s *Settler) Settled() bool { return s.settled }

// Add records the bound after an iteration (NaN: a failed one, which
// changes nothing).
func (s *Settler) Add(bound float64) {
	if !s.started {
		s.Reset()
	}
	if !math.IsNaN(bound) && bound > s.best {
		s.best = bound
	}
	old, full := s.w.push(s.best, SettleWindow)
	if !full || math.IsInf(old, -1) {
		return
	}
	rise, tol := s.best-old, settleNats*(1+math.Abs(s.best)/settleScale)
	switch {
	case !s.settled && rise < tol:
		s.settled = true
	case s.settled && rise > unsettleBy*tol:
		s.settled = false
	}
}

// bestWindow is a ring of the best bound after each of the last size
// records, from which the stopping rule and the live pace's settling
// measure the best bound's rise over a window.
type bestWindow struct {
	ring []float64
	n    int // records since the reset
}

func (w *bestWindow) reset() { w.n = 0 }

// last returns the latest record, if there is one since the reset and the
// ring has this size.
func (w *bestWindow) last(size int) (float64, bool) {
	if w.n == 0 || len(w.ring) != size {
		return 0, false
	}
	return w.ring[(w.n-1)%size], true
}

// push records b and returns the record it replaces, size records ago,
// and whether there was one (the window is full). A new size starts
// afresh.
func (w *bestWindow) push(b float64, size int) (old float64, full bool) {
	if len(w.ring) != size {
		w.ring, w.n = make([]float64, size), 0
	}
	full = w.n >= size
	if full {
		old = w.ring[w.n%size]
	}
	w.ring[w.n%size] = b
	w.n++
	return old, full
}
