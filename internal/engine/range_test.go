package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// evaluateInRanges evaluates m as a sharded fit does: the final layer's
// statistics of every range summed and solved (with opt.OptimalFinalQ),
// then each range's part at that q(u), the KL in the range klAt's, summed
// by SumParts. Each range has an evaluator of its own, as on a process of
// its own.
func evaluateInRanges(t *testing.T, m *Model, opt Options, bounds []int, klAt, chunk int) (*Result, *Gradient) {
	t.Helper()
	model := m
	var q *OptimalQ
	if opt.OptimalFinalQ {
		var sum *FinalStats
		for k := 0; k+1 < len(bounds); k++ {
			var e Evaluator
			s, err := e.FinalStats(m, bounds[k], bounds[k+1], chunk)
			if err != nil {
				t.Fatal(err)
			}
			if sum == nil {
				sum = s
			} else if err := sum.Add(s); err != nil {
				t.Fatal(err)
			}
		}
		var e Evaluator
		var err error
		if q, err = e.SolveFinalQ(m, sum); err != nil {
			t.Fatal(err)
		}
		model = m.Clone()
		q.Apply(model.Layers[len(model.Layers)-1])
	}
	ropt := opt
	ropt.OptimalFinalQ = false
	var parts []Part
	for k := 0; k+1 < len(bounds); k++ {
		var e Evaluator
		r, g, err := e.EvaluateRange(model, ropt, bounds[k], bounds[k+1], chunk, k == klAt)
		if err != nil {
			t.Fatal(err)
		}
		// Only the sums travel: the parts are rebuilt from them as a
		// coordinator decodes them.
		p := Part{Likelihood: r.Likelihood, KL: k == klAt}
		for _, l := range r.Layers {
			p.Layers = append(p.Layers, LayerTerms{KL: l.KL, Compression: l.Compression, Propagation: l.Propagation})
		}
		if g != nil {
			if p.Gradient, err = GradientOf(model, g.Flatten(nil)); err != nil {
				t.Fatal(err)
			}
		}
		parts = append(parts, p)
	}
	r, g, err := SumParts(parts, opt, q)
	if err != nil {
		t.Fatal(err)
	}
	return r, g
}

// TestEvaluateRangeSums: the parts of 1, 2, 3 and 4 ranges of the rows,
// the KL in any one of them, sum to the evaluation of all the data in
// chunks (the bound, its terms, the final q(u) and the gradient), with
// and without the optimal final q(u), on models of one to three layers:
// to 1e-12 relative where the ranges are made of the chunks (the same
// sums, grouped otherwise), to the 1e-10 of chunks of other sizes
// (TestEvaluateChunkedEqualsEvaluate) where they split chunks or hold
// one row.
func TestEvaluateRangeSums(t *testing.T) {
	const n = 130
	models := []struct {
		widths  []int
		kernels []string
	}{
		{[]int{2, 3}, []string{"rbf"}},
		{[]int{1, 3, 2}, []string{"rbf", "rbf"}},
		{[]int{1, 3, 2, 4}, []string{"rbf", "linear", "rbfiso"}},
	}
	splits := []struct {
		bounds []int
		tol    float64
	}{
		{[]int{0, n}, 1e-12},
		{[]int{0, 80, n}, 1e-12},
		{[]int{0, 40, 80, 120, n}, 1e-12},
		{[]int{0, 64, n}, 1e-10},
		{[]int{0, 1, 77, n}, 1e-10},
		{[]int{0, 30, 65, 99, n}, 1e-10},
	}
	for mi, mc := range models {
		rng := rand.New(rand.NewPCG(39, uint64(mi)))
		m := RandomModel(rng, n, mc.widths, mc.kernels, 9)
		for _, optQ := range []bool{false, true} {
			opt := Options{Gradient: true, NoOutputMessage: true, OptimalFinalQ: optQ}
			var e Evaluator
			want, wg, err := e.EvaluateChunked(m, opt, 40)
			if err != nil {
				t.Fatal(err)
			}
			for _, sp := range splits {
				b := sp.bounds
				klAt := len(b) - 2 // the last range's: not the first rows'
				got, gg := evaluateInRanges(t, m, opt, b, klAt, 40)
				compareSums(t, fmt.Sprintf("%v optimal q %v, ranges %v", mc.widths, optQ, b), want, got, wg, gg, sp.tol)
			}
		}
	}
}

// compareSums fails t where the sum of the parts got differs from the
// evaluation of all the data want beyond tol: the bound and each term
// relative to the bound's magnitude (a term is a part of it), the final
// q(u) and the gradient relative to their largest entry (an entry is a
// sum over the data whose parts cancel: its own magnitude may be far
// below theirs).
func compareSums(t *testing.T, name string, want, got *Result, wg, gg *Gradient, tol float64) {
	t.Helper()
	scale := math.Abs(want.Bound)
	check := func(what string, a, b float64) {
		t.Helper()
		if math.Abs(a-b) > tol*scale {
			t.Errorf("%s: %s summed %.17g, whole %.17g (%.2g of the bound)", name, what, b, a, math.Abs(a-b)/scale)
		}
	}
	check("bound", want.Bound, got.Bound)
	check("likelihood", want.Likelihood, got.Likelihood)
	for i, l := range want.Layers {
		check(fmt.Sprintf("layer %d's KL", i+1), l.KL, got.Layers[i].KL)
		check(fmt.Sprintf("layer %d's compression", i+1), l.Compression, got.Layers[i].Compression)
		check(fmt.Sprintf("layer %d's propagation", i+1), l.Propagation, got.Layers[i].Propagation)
	}
	vec := func(what string, a, b []float64) {
		t.Helper()
		if len(a) != len(b) {
			t.Fatalf("%s: %s has %d entries summed, %d whole", name, what, len(b), len(a))
		}
		var big, diff float64
		at := 0
		for i := range a {
			big = max(big, math.Abs(a[i]))
			if d := math.Abs(a[i] - b[i]); d > diff {
				diff, at = d, i
			}
		}
		if diff > tol*big {
			t.Errorf("%s: %s[%d] summed %.17g, whole %.17g (%.2g of the largest entry)", name, what, at, b[at], a[at], diff/big)
		}
	}
	if (want.FinalQ == nil) != (got.FinalQ == nil) {
		t.Fatalf("%s: the final q(u) is nil in one result only", name)
	}
	if want.FinalQ != nil {
		vec("the final q_mu", want.FinalQ.Mu.RawMatrix().Data, got.FinalQ.Mu.RawMatrix().Data)
		vec("the final q_sqrt", want.FinalQ.Sqrt.RawMatrix().Data, got.FinalQ.Sqrt.RawMatrix().Data)
	}
	vec("the gradient", wg.Flatten(nil), gg.Flatten(nil))
}

// TestSumPartsRefuses: parts without the KL, with it twice, of other
// shapes or a range outside the data are errors, and the optimal q(u) is
// not a range's to compute.
func TestSumPartsRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 7))
	m := RandomModel(rng, 30, []int{1, 2, 3}, []string{"rbf", "rbf"}, 5)
	var e Evaluator
	opt := Options{Gradient: true, NoOutputMessage: true}
	r, g, err := e.EvaluateRange(m, opt, 0, 30, 10, true)
	if err != nil {
		t.Fatal(err)
	}
	p := Part{Likelihood: r.Likelihood, Layers: r.Layers, KL: true, Gradient: g}
	noKL := p
	noKL.KL = false
	other := RandomModel(rng, 30, []int{1, 2}, []string{"rbf"}, 5)
	_, og, err := e.EvaluateRange(other, opt, 0, 30, 10, true)
	if err != nil {
		t.Fatal(err)
	}
	wrong := Part{Likelihood: 1, Layers: r.Layers, Gradient: og}
	for name, parts := range map[string][]Part{
		"none":               nil,
		"no KL":              {noKL},
		"two KLs":            {p, p},
		"another's gradient": {p, wrong},
	} {
		if _, _, err := SumParts(parts, opt, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, _, err := e.EvaluateRange(m, opt, 20, 31, 10, false); err == nil {
		t.Error("rows 21 to 31 of 30: no error")
	}
	if _, _, err := e.EvaluateRange(m, opt, 5, 5, 10, false); err == nil {
		t.Error("an empty range: no error")
	}
	if _, _, err := e.EvaluateRange(m, Options{OptimalFinalQ: true}, 0, 30, 10, true); err == nil {
		t.Error("a range with the optimal q(u): no error")
	}
	if _, err := GradientOf(m, make([]float64, 3)); err == nil {
		t.Error("a gradient of 3 values: no error")
	}
	var s FinalStats
	if err := s.Add(&FinalStats{Phi: make([]float64, 4)}); err == nil {
		t.Error("statistics of another shape: no error")
	}
}

// TestEvaluateBatchParts: a minibatch split into parts of its rows, the
// KL in one of them, sums to the minibatch's estimate (Options.Rows): the
// bound, its terms and the gradient to 1e-12, on models of one to three
// layers.
func TestEvaluateBatchParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 21))
	for _, widths := range [][]int{{2, 3}, {1, 3, 2}, {1, 3, 2, 4}} {
		kernels := []string{"rbf", "rbf", "rbf"}[:len(widths)-1]
		m := RandomModel(rng, 200, widths, kernels, 7)
		batch := []int{150, 3, 77, 10, 199, 0, 42, 120, 64, 65, 11, 180}
		opt := Options{Rows: batch, Gradient: true, NoOutputMessage: true}
		want, wg := mustEval(t, m, opt)
		for _, cuts := range [][]int{{0, 12}, {0, 5, 12}, {0, 1, 6, 9, 12}} {
			var parts []Part
			for k := 0; k+1 < len(cuts); k++ {
				var e Evaluator
				o := opt
				o.Rows = batch[cuts[k]:cuts[k+1]]
				kl := k == len(cuts)-2
				r, g, err := e.EvaluateBatchPart(m, o, len(batch), kl)
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, Part{Likelihood: r.Likelihood, Layers: r.Layers, KL: kl, Gradient: g})
			}
			got, gg, err := SumParts(parts, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			compareSums(t, fmt.Sprintf("%v, parts %v", widths, cuts), want, got, wg, gg, 1e-12)
		}
	}
	var e Evaluator
	m := RandomModel(rng, 20, []int{1, 2}, []string{"rbf"}, 4)
	if _, _, err := e.EvaluateBatchPart(m, Options{Rows: []int{1, 2, 3}}, 2, true); err == nil {
		t.Error("3 rows of a minibatch of 2: no error")
	}
	if _, _, err := e.EvaluateBatchPart(m, Options{Rows: []int{25}}, 2, true); err == nil {
		t.Error("row 26 of 20: no error")
	}
}
