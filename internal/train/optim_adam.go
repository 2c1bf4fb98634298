package train

import (
	"fmt"
	"math"
)

// adamStep performs one Adam iteration (Kingma & Ba, 2015) on a minibatch.
// A failed evaluation reverts to the parameters before the last step,
// halves the learning rate and resets the moments.
func (t *Trainer) adamStep() StepInfo {
	nAll, _ := t.m.X.Dims()
	full := t.cfg.BatchSize <= 0 || t.cfg.BatchSize >= nAll
	var rows []int
	evals := 0
	var fb float64
	if full {
		// The full-data gradient at u is known from the last step.
	} else {
		rows = t.nextBatch(nAll)
		evals++
		var err error
		fb, err = t.eval(t.u, t.g, rows, true)
		if err != nil {
			if t.unchecked {
				// The last step was never evaluated on the full data:
				// revert it.
				copy(t.u, t.uPrev)
				t.unchecked = false
				t.diverged()
				t.setU(t.u)
				return StepInfo{Iter: t.iter, Bound: -t.f, Estimate: true, Event: fmt.Sprintf("diverged (%s): reverted, learning rate lowered to %.3g", failureKind(err), t.cfg.LearningRate*t.lrMul), Evals: evals}
			}
			// u was good on the full data: a batch-specific failure.
			t.setU(t.u)
			return StepInfo{Iter: t.iter, Bound: -t.f, Event: fmt.Sprintf("minibatch evaluation failed (%s): batch skipped", failureKind(err)), Evals: evals}
		}
	}
	a := &t.adam
	a.t++
	lr := t.cfg.LearningRate * t.lrMul
	c1 := 1 - math.Pow(adamBeta1, float64(a.t))
	c2 := 1 - math.Pow(adamBeta2, float64(a.t))
	for k, g := range t.g {
		a.m[k] = adamBeta1*a.m[k] + (1-adamBeta1)*g
		a.v[k] = adamBeta2*a.v[k] + (1-adamBeta2)*g*g
		t.ut[k] = t.u[k] - lr*(a.m[k]/c1)/(math.Sqrt(a.v[k]/c2)+adamEps)
	}
	info := StepInfo{Evals: evals}
	var f float64
	var err error
	if full {
		evals++
		f, err = t.eval(t.ut, t.gt, nil, true)
	} else if nAll <= FullBoundRows {
		evals++
		f, err = t.eval(t.ut, nil, nil, false)
	} else {
		t.setU(t.ut)
		f, info.Estimate = fb, true
		copy(t.uPrev, t.u)
		t.unchecked = true
	}
	info.Evals = evals
	if err != nil {
		t.setPoint(t.u, t.qU)
		t.diverged()
		info.Iter, info.Bound = t.iter, -t.f
		info.Event = fmt.Sprintf("diverged (%s): reverted, learning rate lowered to %.3g", failureKind(err), t.cfg.LearningRate*t.lrMul)
		return info
	}
	copy(t.u, t.ut)
	if full {
		copy(t.g, t.gt)
		copy(t.qU, t.qLast)
	}
	t.f = f
	t.iter++
	info.Iter, info.Bound = t.iter, -f
	return info
}

// diverged halves Adam's learning rate and resets its moments.
func (t *Trainer) diverged() {
	t.lrMul /= 2
	t.adam.t = 0
	clear(t.adam.m)
	clear(t.adam.v)
}
