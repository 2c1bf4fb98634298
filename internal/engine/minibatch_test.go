package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// worstRel reports the largest relative difference between got and want,
// entry by entry, each relative to max(|want_i|, floor).
func worstRel(got, want []float64, floor float64) (worst float64, at int) {
	for i := range want {
		d := math.Abs(got[i]-want[i]) / math.Max(math.Abs(want[i]), floor)
		if d > worst || d != d {
			worst, at = d, i
		}
	}
	return worst, at
}

// TestMinibatchEstimatesAverageToTheBound: the minibatch estimate (Rows)
// is unbiased in the strongest sense: over one pass of disjoint batches of
// equal size, in a shuffled order, the mean of the estimates of the bound
// and of every gradient entry equals the full-data bound and gradient, to
// rounding, on a 3-layer model with several outputs. It is what makes
// stochastic fits (train.SVI) and chunked evaluation (EvaluateChunked)
// right.
func TestMinibatchEstimatesAverageToTheBound(t *testing.T) {
	const n, batch = 120, 20
	rng := rand.New(rand.NewPCG(35, 1))
	m := RandomModel(rng, n, []int{2, 3, 2, 4}, []string{"rbf", "rbf", "rbf"}, 5)
	full, fg := mustEval(t, m, Options{Gradient: true})
	want := fg.Flatten(nil)
	perm := rng.Perm(n)
	var bound float64
	mean := make([]float64, len(want))
	for lo := 0; lo < n; lo += batch {
		r, g := mustEval(t, m, Options{Rows: perm[lo : lo+batch], Gradient: true})
		if lo == 0 && math.Abs(r.Bound-full.Bound) < 1e-6*math.Abs(full.Bound) {
			t.Fatalf("one batch's estimate %v equals the bound %v: the test shows nothing", r.Bound, full.Bound)
		}
		bound += r.Bound / (n / batch)
		for i, v := range g.Flatten(nil) {
			mean[i] += v / (n / batch)
		}
	}
	if d := math.Abs(bound-full.Bound) / math.Abs(full.Bound); d > 1e-10 {
		t.Errorf("mean of the estimates %.15g, bound %.15g: relative difference %.2g", bound, full.Bound, d)
	}
	// Entries that cancel to nearly zero are compared relative to a
	// millionth of the largest.
	floor := 1e-6 * normInf(want)
	if d, i := worstRel(mean, want, floor); d > 1e-10 {
		t.Errorf("gradient entry %d: mean of the estimates %.15g, full %.15g: relative difference %.2g", i, mean[i], want[i], d)
	}
}

func normInf(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = math.Max(m, math.Abs(v))
	}
	return m
}
