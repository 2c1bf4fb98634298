package train

import (
	"errors"
	"fmt"
	"math"

	"dgpviz/internal/engine"
	"dgpviz/internal/linalg"
)

// lbfgsStep performs one L-BFGS iteration (Nocedal & Wright, 2006,
// Algorithm 7.4): a search direction, a line search along it, then either
// the accepted point (the memory's update and the convergence test) or
// the recovery from a search that found none.
func (t *Trainer) lbfgsStep() StepInfo {
	d, gd := t.searchDirection()
	ls := t.lineSearch(d, gd, t.initialStep(d))
	if !ls.accepted {
		return t.recoverSearch(ls)
	}
	return t.acceptStep(ls)
}

// searchDirection writes the quasi-Newton direction into t.dir and
// returns it with its slope g·d, from steepest descent when the memory's
// direction is not one of descent.
func (t *Trainer) searchDirection() (d []float64, gd float64) {
	d = t.dir
	t.direction(d)
	if t.ng {
		t.natDirection(d)
	}
	gd = linalg.Dot(t.g, d)
	if !(gd < 0) {
		t.resetMemory()
		t.direction(d)
		if t.ng {
			t.natDirection(d)
		}
		gd = linalg.Dot(t.g, d)
	}
	return d, gd
}

// initialStep is the line search's first trial step along d: 1 (the
// quasi-Newton step), scaled to unit length from steepest descent, and
// at most maxStepInf in any coordinate.
func (t *Trainer) initialStep(d []float64) float64 {
	step := 1.0
	if t.lb.n == 0 {
		step = 1 / math.Max(1, norm2(d))
	}
	if dinf := normInf(d); step*dinf > maxStepInf {
		step = maxStepInf / dinf
	}
	return step
}

// lineSearch is the outcome of a line search: whether it accepted a point
// (t.ut, with gradient t.gt and objective f; the final q(u) there in
// t.qLast), whether that point is the fallback of sufficient decrease
// alone (fromLo, whose full gradient is gone), and its evaluations and
// failures.
type lineSearch struct {
	accepted, fromLo bool
	f                float64
	evals, failures  int
	lastErr          error
}

// lineSearch searches along d from t.u for a weak-Wolfe point, by
// bisection and extrapolation (Lewis & Overton, 2013), treating a failed
// evaluation as +∞: the step shrinks past NaN bounds and failed Cholesky
// factorisations.
func (t *Trainer) lineSearch(d []float64, gd, step float64) lineSearch {
	var ls lineSearch
	lo, hi := 0.0, math.Inf(1)
	var flo float64
	for ls.evals < maxLineEvals {
		ls.evals++
		for k := range t.ut {
			t.ut[k] = t.u[k] + step*d[k]
		}
		ft, err := t.eval(t.ut, t.gt, nil, true)
		if err != nil {
			ls.failures++
			ls.lastErr = err
		}
		switch {
		case err != nil || ft > t.f+armijoC1*step*gd:
			hi = step
		case linalg.Dot(t.gt, d) < wolfeC2*gd:
			lo, flo = step, ft
			copy(t.ulo, t.ut)
			copy(t.glo, t.gt)
			copy(t.qLow, t.qLast)
		default:
			ls.accepted, ls.f = true, ft
		}
		if ls.accepted {
			return ls
		}
		if math.IsInf(hi, 1) {
			step = 2 * lo
		} else {
			step = (lo + hi) / 2
		}
		if hi-lo <= 1e-14*hi {
			break
		}
	}
	if lo > 0 {
		// Sufficient decrease without the curvature condition: take it.
		copy(t.ut, t.ulo)
		copy(t.gt, t.glo)
		copy(t.qLast, t.qLow)
		t.setPoint(t.ut, t.qLast)
		ls.accepted, ls.f, ls.fromLo = true, flo, true
	}
	return ls
}

// recoverSearch handles a line search that accepted no point: it reverts
// to the last good parameters and, by the cause, raises the jitter (Kuu
// not positive definite), restarts from steepest descent (a poor
// quasi-Newton direction) or, when steepest descent itself found no
// decrease, reports a stationary point.
func (t *Trainer) recoverSearch(ls lineSearch) StepInfo {
	t.setPoint(t.u, t.qU)
	evals := ls.evals
	kind := "no decrease"
	if ls.lastErr != nil {
		kind = failureKind(ls.lastErr)
	}
	var event string
	status := NotTerminated
	switch {
	case errors.Is(ls.lastErr, engine.ErrNotPositiveDefinite) && t.m.Jitter < MaxJitter:
		t.m.Jitter = raiseJitter(t.m.Jitter)
		t.evalOK = false
		event = fmt.Sprintf("diverged (%s): reverted, jitter raised to %.3g", kind, t.m.Jitter)
		t.resetMemory()
		e, ne, err := t.start()
		evals += ne
		event = joinEvents(event, e)
		if err != nil {
			event = joinEvents(event, err.Error())
			status = Failure
		}
	case t.lb.n > 0:
		// Without failed evaluations this is a poor quasi-Newton
		// direction near an optimum, not a divergence: restart
		// quietly from steepest descent.
		if ls.lastErr != nil {
			event = fmt.Sprintf("line search failed (%s): reverted, memory reset", kind)
		}
		t.resetMemory()
	default:
		// Steepest descent made no progress: a (numerical) optimum,
		// if it is so twice or after a few accepted steps.
		t.stuck++
		if t.stuck >= 2 || t.fresh >= freshIters {
			status = Stationary
		}
		if ls.lastErr != nil {
			event = fmt.Sprintf("line search failed (%s): stopped at the last good parameters", kind)
		}
	}
	return StepInfo{Iter: t.iter, Bound: -t.f, Event: event, Status: status, Evals: evals}
}

// acceptStep moves to the line search's point, adds the step to the
// memory, and tests L-BFGS's own convergence: a vanishing gradient or no
// decrease, once the fresh-start iterations are made.
func (t *Trainer) acceptStep(ls lineSearch) StepInfo {
	var event string
	if ls.failures > 0 {
		event = fmt.Sprintf("step shrunk after %d failed trial(s) (%s)", ls.failures, failureKind(ls.lastErr))
	}
	t.remember()
	fprev := t.f
	copy(t.u, t.ut)
	copy(t.g, t.gt)
	copy(t.qU, t.qLast)
	t.gUOK = !ls.fromLo
	if t.gUOK {
		copy(t.gU, t.gfull)
	}
	t.f = ls.f
	t.iter++
	t.fresh++
	t.stuck = 0
	status := NotTerminated
	if (normInf(t.g) < gradTol || fprev-t.f <= 0) && t.fresh >= freshIters {
		status = GradientThreshold
	}
	return StepInfo{Iter: t.iter, Bound: -t.f, Event: event, Status: status, Evals: ls.evals}
}

// remember adds the pair (s, y) of the step from t.u to t.ut to the
// memory, unless it has no positive curvature.
func (t *Trainer) remember() {
	lb := &t.lb
	s, y := lb.s[lb.top], lb.y[lb.top]
	var sy, yy float64
	for k := range s {
		s[k] = t.ut[k] - t.u[k]
		y[k] = t.gt[k] - t.g[k]
		if t.ng && t.isQ[k] {
			s[k], y[k] = 0, 0 // the natural gradient steps them
		}
		sy += s[k] * y[k]
		yy += y[k] * y[k]
	}
	if sy > 1e-12*yy && sy > 0 {
		lb.rho[lb.top] = 1 / sy
		lb.top = (lb.top + 1) % lbfgsMemory
		lb.n = min(lb.n+1, lbfgsMemory)
	}
}

// direction writes the L-BFGS search direction −H·g into d by the two-loop
// recursion (Nocedal & Wright, 2006, Algorithm 7.4).
func (t *Trainer) direction(d []float64) {
	lb := &t.lb
	copy(d, t.g)
	// The two loops of the recursion, each update of d fused with the
	// dot product that the next one needs (axpyDot: the same sums as
	// linalg.Dot, so the same bits), to pass over d once per pair.
	key := func(i int) int { return (lb.top - 1 - i + len(lb.s)) % len(lb.s) }
	var dot float64
	if lb.n > 0 {
		dot = linalg.Dot(lb.s[key(0)], d)
	}
	for i := 0; i < lb.n; i++ {
		k := key(i)
		lb.alpha[k] = lb.rho[k] * dot
		if i+1 < lb.n {
			dot = axpyDot(-lb.alpha[k], lb.y[k], d, lb.s[key(i+1)])
		} else {
			axpy(-lb.alpha[k], lb.y[k], d)
		}
	}
	if lb.n > 0 {
		k := key(0)
		gamma := 1 / (lb.rho[k] * linalg.Dot(lb.y[k], lb.y[k]))
		for i := range d {
			d[i] *= gamma
		}
		dot = linalg.Dot(lb.y[key(lb.n-1)], d)
	}
	for i := lb.n - 1; i >= 0; i-- {
		k := key(i)
		beta := lb.rho[k] * dot
		if i > 0 {
			dot = axpyDot(lb.alpha[k]-beta, lb.s[k], d, lb.y[key(i-1)])
		} else {
			axpy(lb.alpha[k]-beta, lb.s[k], d)
		}
	}
	for i := range d {
		d[i] = -d[i]
	}
}

// axpyDot adds a·x to y and returns Σ z_i·y_i of the new y, summed as
// linalg.Dot(z, y) sums (four partial sums, combined in pairs).
func axpyDot(a float64, x, y, z []float64) float64 {
	y, z = y[:len(x)], z[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		xx, yy, zz := x[i:i+4:i+4], y[i:i+4:i+4], z[i:i+4:i+4]
		yy[0] += a * xx[0]
		yy[1] += a * xx[1]
		yy[2] += a * xx[2]
		yy[3] += a * xx[3]
		s0 += zz[0] * yy[0]
		s1 += zz[1] * yy[1]
		s2 += zz[2] * yy[2]
		s3 += zz[3] * yy[3]
	}
	for ; i < len(x); i++ {
		y[i] += a * x[i]
		s0 += z[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy adds a·x to y, four at a time (L-BFGS's direction passes over its
// history of 2·lbfgsMemory vectors of every parameter: 143k for the Frey
// preset).
func axpy(a float64, x, y []float64) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		xx, yy := x[i:i+4:i+4], y[i:i+4:i+4]
		yy[0] += a * xx[0]
		yy[1] += a * xx[1]
		yy[2] += a * xx[2]
		yy[3] += a * xx[3]
	}
	for ; i < len(x); i++ {
		y[i] += a * x[i]
	}
}
