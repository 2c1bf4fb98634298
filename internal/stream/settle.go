package stream

import "math"

// The live pace: the optimizer runs as fast as it can until the bound
// settles, then at the session's speed (iterations per second). A class
// sees a converged picture within a second or two of opening the demo or
// of an edit, instead of after the minutes 60 iterations a second take,
// and then the fine changes at a pace one can follow. docs/measurements.md
// ("Live pace") has the times.

// Settling: the bound has settled when its best value rose by less than
// settleNats·(1 + |bound|/settleScale) over the last settleWindow
// iterations. On the step demo (30 points) the bound rises by 0.05 nats
// per 100 iterations at about iteration 1000, where it is within 0.04
// nats of the optimizer's final −0.754. A bound that rises 4 times faster
// again (the optimizer left a plateau) unsettles it.
const (
	settleWindow = 100   // iterations
	settleNats   = 0.05  // nats per settleWindow
	settleScale  = 5000. // a bound of −5000 nats settles at twice the rise
	unsettleBy   = 4     // hysteresis: unsettled at this many times the rise
)

// fastUntilSettled switches the fast phase on; the pace measurement
// (TestMeasurePace) turns it off to time the pace before it.
var fastUntilSettled = true

// settler follows the bound of the iterations since the last new or
// edited model.
type settler struct {
	settled bool
	best    float64   // the best bound since the last reset
	ring    []float64 // best after each of the last settleWindow iterations
	at      int       // iterations added since the reset
}

// reset starts afresh: a new or edited model.
func (s *settler) reset() {
	*s = settler{best: math.Inf(-1), ring: s.ring[:0]}
}

// add records the bound after an iteration.
func (s *settler) add(iter int, bound float64) {
	if !math.IsNaN(bound) && bound > s.best {
		s.best = bound
	}
	if cap(s.ring) < settleWindow {
		s.ring = make([]float64, 0, settleWindow)
	}
	k := s.at % settleWindow
	var old float64
	if len(s.ring) < settleWindow {
		s.ring = append(s.ring, s.best)
	} else {
		old = s.ring[k]
		s.ring[k] = s.best
	}
	s.at++
	if s.at <= settleWindow || math.IsInf(old, -1) {
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
