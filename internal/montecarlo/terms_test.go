package montecarlo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"dgpviz/internal/engine"
)

// TestTermsMatchEngine checks the package's analytic message and penalty
// terms against the engine's, datum by datum, for every layer of random
// models: layer 0 at the certain data X, later layers at the previous
// layer's Gaussian messages.
func TestTermsMatchEngine(t *testing.T) {
	for _, tc := range []struct {
		widths  []int
		kernels []string
	}{
		{[]int{1, 2, 1}, []string{"rbf", "rbf"}},
		{[]int{2, 3, 2}, []string{"rbf", "linear"}},
		{[]int{1, 2, 2, 1}, []string{"rbf", "rbf", "rbf"}},
		{[]int{2, 2, 1, 1}, []string{"linear", "rbf", "rbf"}},
	} {
		for seed := uint64(1); seed <= 3; seed++ {
			name := fmt.Sprintf("%v/%v/seed%d", tc.widths, tc.kernels, seed)
			m := engine.RandomModel(rand.New(rand.NewPCG(seed, 7)), 12, tc.widths, tc.kernels, 6)
			res, _, err := engine.Evaluate(m, engine.Options{OutputVariance: true})
			if err != nil {
				t.Fatalf("%s: Evaluate: %v", name, err)
			}
			for i, el := range m.Layers {
				l := mustLayer(t, el, m.Jitter)
				_, q, d := l.Dims()
				for n := 0; n < 12; n++ {
					mu := make([]float64, q)
					var s []float64
					if i == 0 {
						for r := range mu {
							mu[r] = m.X.At(n, r)
						}
					} else {
						s = make([]float64, q)
						for r := range mu {
							mu[r] = res.Messages[i-1].Mean.At(n, r)
							s[r] = res.Messages[i-1].Var.At(n, r)
						}
					}
					got, err := l.Terms(mu, s)
					if err != nil {
						t.Fatalf("%s: Terms: %v", name, err)
					}
					// 1e-9 relative: the same formulas summed in another order.
					check := func(what string, got, want float64) {
						if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
							t.Errorf("%s layer %d datum %d: %s = %v, engine %v", name, i, n, what, got, want)
						}
					}
					check("compression", got.Compression, res.Layers[i].CompressionPerDatum[n])
					check("propagation", got.Propagation, res.Layers[i].PropagationPerDatum[n])
					var sum float64
					for k := 0; k < d; k++ {
						check("mean", got.Mean[k], res.Messages[i].Mean.At(n, k))
						check("var", got.Var[k], res.Messages[i].Var.At(n, k))
						sum += got.PropagationPerOutput[k]
						check("true var", got.TrueVar[k], got.Var[k]+2*el.NoiseVariance*(got.Compression/float64(d)+got.PropagationPerOutput[k]))
					}
					check("Σ_d propagation_d", sum, got.Propagation)
				}
			}
		}
	}
}

// TestTermsCertainInput checks that a zero input variance is the same as
// a certain input, with no propagation term.
func TestTermsCertainInput(t *testing.T) {
	m := engine.RandomModel(rand.New(rand.NewPCG(3, 3)), 5, []int{2, 2}, []string{"rbf"}, 5)
	l := mustLayer(t, m.Layers[0], m.Jitter)
	a, err := l.Terms([]float64{0.3, -0.2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Terms([]float64{0.3, -0.2}, []float64{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	// 1e-12: Ψ2 = ψ1ᵀψ1 analytically; only rounding differs.
	if math.Abs(a.Compression-b.Compression) > 1e-12 || math.Abs(b.Propagation) > 1e-12 || a.Propagation != 0 && math.Abs(a.Propagation) > 1e-12 {
		t.Errorf("certain input: %+v, zero variance: %+v", a, b)
	}
}
