package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFastExp compares fastExp with math.Exp over the whole range the psi
// statistics use, and at the edges of its fast path.
func TestFastExp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	worst := 0.0
	xs := []float64{0, -0, 1e-300, -1e-300, math.Ln2 / 128, -700, 699.9, -699.999, -745, 710, math.Inf(-1), math.Inf(1)}
	for range 1000000 {
		xs = append(xs, -rng.Float64()*60)
	}
	for range 100000 {
		xs = append(xs, (rng.Float64()*2-1)*700)
	}
	for _, x := range xs {
		got, want := fastExp(x), math.Exp(x)
		if want == 0 || math.IsInf(want, 0) {
			if got != want {
				t.Errorf("fastExp(%v) = %v, want %v", x, got, want)
			}
			continue
		}
		rel := math.Abs(got-want) / want
		worst = math.Max(worst, rel)
	}
	// A few ulp (2.2e-16 each) is what the gradient checks can tolerate.
	if worst > 1e-15 {
		t.Errorf("worst relative error %.3g, want ≤ 1e-15", worst)
	}
	if !math.IsNaN(fastExp(math.NaN())) {
		t.Error("fastExp(NaN) is not NaN")
	}
	t.Logf("worst relative error %.3g", worst)
}

func BenchmarkExp(b *testing.B) {
	xs := make([]float64, 1024)
	for i := range xs {
		xs[i] = -float64(i) / 100
	}
	b.Run("math", func(b *testing.B) {
		var s float64
		for i := range b.N {
			s += math.Exp(xs[i&1023])
		}
		_ = s
	})
	b.Run("fast", func(b *testing.B) {
		var s float64
		for i := range b.N {
			s += fastExp(xs[i&1023])
		}
		_ = s
	})
}
