package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// closeRel reports the largest relative difference between got and want,
// entry by entry, each relative to max(|want_i|, floor).
func closeRel(got, want []float64, floor float64) (worst float64, at int) {
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
	if d, i := closeRel(mean, want, floor); d > 1e-10 {
		t.Errorf("gradient entry %d: mean of the estimates %.15g, full %.15g: relative difference %.2g", i, mean[i], want[i], d)
	}
}

// TestEvaluateChunked: the chunked evaluation (chunks of 7 rows, the last
// shorter) gives the bound, its terms, the per-datum penalties, the
// messages and the gradient of the evaluation of all the data at once.
func TestEvaluateChunked(t *testing.T) {
	const n = 40
	m := RandomModel(rand.New(rand.NewPCG(35, 2)), n, []int{1, 2, 3}, []string{"rbf", "rbf"}, 6)
	full, fg := mustEval(t, m, Options{Gradient: true})
	var e Evaluator
	res, g, err := e.EvaluateChunked(m, Options{Gradient: true}, 7)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(res.Bound-full.Bound) / math.Abs(full.Bound); d > 1e-12 {
		t.Errorf("chunked bound %.15g, full %.15g", res.Bound, full.Bound)
	}
	for i, l := range full.Layers {
		c := res.Layers[i]
		for _, p := range [][2]float64{{c.KL, l.KL}, {c.Compression, l.Compression}, {c.Propagation, l.Propagation}} {
			if math.Abs(p[0]-p[1]) > 1e-12*math.Max(1, math.Abs(p[1])) {
				t.Errorf("layer %d: chunked term %.15g, full %.15g", i+1, p[0], p[1])
			}
		}
		if d, k := closeRel(c.PropagationPerDatum, l.PropagationPerDatum, 1e-12); len(c.PropagationPerDatum) != n || d > 1e-12 {
			t.Errorf("layer %d: %d per-datum propagations, datum %d off by %.2g", i+1, len(c.PropagationPerDatum), k+1, d)
		}
		if full.Messages[i].Mean != nil {
			a, b := res.Messages[i].Mean.RawMatrix().Data, full.Messages[i].Mean.RawMatrix().Data
			if d, k := closeRel(a, b, 1e-12); len(a) != len(b) || d > 1e-12 {
				t.Errorf("layer %d's message: entry %d off by %.2g", i+1, k, d)
			}
		}
	}
	want := fg.Flatten(nil)
	if d, i := closeRel(g.Flatten(nil), want, 1e-6*normInf(want)); d > 1e-10 {
		t.Errorf("gradient entry %d off by %.2g", i, d)
	}
	if _, _, err := e.EvaluateChunked(m, Options{OptimalFinalQ: true}, 7); err == nil {
		t.Error("a chunked evaluation of the optimal final q(u) did not fail")
	}
	if _, _, err := e.EvaluateChunked(m, Options{}, 0); err == nil {
		t.Error("chunks of 0 rows did not fail")
	}
}

func normInf(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = math.Max(m, math.Abs(v))
	}
	return m
}
