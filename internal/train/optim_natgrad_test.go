package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"dgpviz/internal/engine"
)

// TestNatStepConjugate: for a bound quadratic in v under q(v) = N(μ, W·Wᵀ),
//
//	F = E_q[bᵀv − ½vᵀAv] − KL(q ‖ N(0, I)),
//
// whose optimum is Σ* = (A + I)⁻¹, μ* = Σ*·b, a natural-gradient step of
// size 1 from any q lands on the optimum (Salimbeni et al., 2018, §3), and
// one of size ½ halves the distance in the natural parameters.
func TestNatStepConjugate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const m = 5
	for trial := range 10 {
		// A = R·Rᵀ (positive semi-definite), b, and a random q.
		r := make([]float64, m*m)
		for i := range r {
			r[i] = rng.NormFloat64()
		}
		a := make([]float64, m*m)
		mulInto(a, r, r, m, true)
		b := make([]float64, m)
		mu := make([]float64, m)
		w := make([]float64, m*m)
		for i := range m {
			b[i] = rng.NormFloat64()
			mu[i] = rng.NormFloat64()
			for j := 0; j <= i; j++ {
				w[i*m+j] = 0.3 * rng.NormFloat64()
			}
			w[i*m+i] = 0.5 + rng.Float64()
		}
		// Gradients: g_μ = b − Aμ − μ; ∂F/∂Σ = −½A − ½I + ½Σ⁻¹, and the
		// gradient w.r.t. the lower triangle of W is lower(2·Σ̄·W).
		sigma := make([]float64, m*m)
		mulInto(sigma, w, w, m, true)
		sinv := invertSPD(t, sigma, m)
		gmu := make([]float64, m)
		sbar := make([]float64, m*m)
		for i := range m {
			gmu[i] = b[i] - mu[i]
			for j := range m {
				gmu[i] -= a[i*m+j] * mu[j]
				sbar[i*m+j] = -0.5*a[i*m+j] + 0.5*sinv[i*m+j]
			}
			sbar[i*m+i] -= 0.5
		}
		gw := make([]float64, m*m)
		mulInto(gw, sbar, w, m, false)
		for i := range m {
			for j := range m {
				if j > i {
					gw[i*m+j] = 0
				} else {
					gw[i*m+j] *= 2
				}
			}
		}
		mu2, w2 := make([]float64, m), make([]float64, m*m)
		if !natStep(m, mu, w, gmu, gw, 1, mu2, w2, make([]float64, 4*m*m)) {
			t.Fatalf("trial %d: step of size 1 refused", trial)
		}
		// The optimum.
		api := make([]float64, m*m)
		copy(api, a)
		for i := range m {
			api[i*m+i]++
		}
		sstar := invertSPD(t, api, m)
		sigma2 := make([]float64, m*m)
		mulInto(sigma2, w2, w2, m, true)
		for i := range m {
			var want float64
			for j := range m {
				want += sstar[i*m+j] * b[j]
				if d := math.Abs(sigma2[i*m+j] - sstar[i*m+j]); d > 1e-10 {
					t.Errorf("trial %d: Σ'[%d][%d] = %.12g, optimum %.12g", trial, i, j, sigma2[i*m+j], sstar[i*m+j])
				}
			}
			if d := math.Abs(mu2[i] - want); d > 1e-10*math.Max(1, math.Abs(want)) {
				t.Errorf("trial %d: μ'[%d] = %.12g, optimum %.12g", trial, i, mu2[i], want)
			}
		}
		// Size ½: the precision moves half way, Σ'⁻¹ = (Σ⁻¹ + A + I)/2.
		if !natStep(m, mu, w, gmu, gw, 0.5, mu2, w2, make([]float64, 4*m*m)) {
			t.Fatalf("trial %d: step of size ½ refused", trial)
		}
		mulInto(sigma2, w2, w2, m, true)
		p2 := invertSPD(t, sigma2, m)
		for i := range m * m {
			if want := 0.5 * (sinv[i] + api[i]); math.Abs(p2[i]-want) > 1e-8*math.Max(1, math.Abs(want)) {
				t.Errorf("trial %d: half step: precision entry %d = %.12g, want %.12g", trial, i, p2[i], want)
			}
		}
	}
}

// invertSPD returns the inverse of the symmetric positive definite a (m×m)
// by Gauss–Jordan elimination, independent of the Cholesky code under test.
func invertSPD(t *testing.T, a []float64, m int) []float64 {
	t.Helper()
	aug := make([]float64, m*2*m)
	for i := range m {
		copy(aug[i*2*m:i*2*m+m], a[i*m:(i+1)*m])
		aug[i*2*m+m+i] = 1
	}
	for c := range m {
		p := aug[c*2*m+c]
		if math.Abs(p) < 1e-14 {
			t.Fatal("singular")
		}
		for j := range 2 * m {
			aug[c*2*m+j] /= p
		}
		for r := range m {
			if r == c {
				continue
			}
			f := aug[r*2*m+c]
			for j := range 2 * m {
				aug[r*2*m+j] -= f * aug[c*2*m+j]
			}
		}
	}
	out := make([]float64, m*m)
	for i := range m {
		copy(out[i*m:(i+1)*m], aug[i*2*m+m:(i+1)*2*m])
	}
	return out
}

// TestTrainerNaturalGradient: with natural-gradient steps the hidden
// layers' q(u) move by them within L-BFGS's steps — L-BFGS's memory holds
// zeros for their entries — the bound never falls, the final q(u) stays at
// its optimum, and the bound rises at least as far as without them on this
// robot-shaped model.
func TestTrainerNaturalGradient(t *testing.T) {
	m := engine.RandomModel(rand.New(rand.NewPCG(9, 9)), 40, []int{1, 3, 3, 4}, []string{"rbf", "rbf", "rbf"}, 6)
	r0 := boundOf(t, m)
	final := map[bool]float64{}
	for _, ng := range []bool{false, true} {
		tr, err := NewTrainer(m.Clone(), TrainerConfig{Workers: 1, NaturalGradient: ng})
		if err != nil {
			t.Fatal(err)
		}
		hidden := 0
		for _, q := range tr.isQ {
			if q {
				hidden++
			}
		}
		if want := map[bool]int{false: 0, true: 2 * (6*3 + 3*6*7/2)}[ng]; hidden != want { // two hidden layers, M = 6, D = 3
			t.Fatalf("natural gradient %v: %d entries stepped by it, want %d", ng, hidden, want)
		}
		before := tr.Model().Layers[0].QMu.At(0, 0)
		prev := r0
		for range 60 {
			s, err := tr.Step()
			if err != nil {
				t.Fatal(err)
			}
			if s.Bound < prev {
				t.Fatalf("natural gradient %v, iteration %d: bound %v fell from %v", ng, s.Iter, s.Bound, prev)
			}
			prev = s.Bound
			if s.Status.Terminated() {
				break
			}
		}
		final[ng] = prev
		if !finalQIsOptimal(t, tr.Model()) {
			t.Errorf("natural gradient %v: the final q(u) is not at its optimum", ng)
		}
		if tr.Model().Layers[0].QMu.At(0, 0) == before {
			t.Errorf("natural gradient %v: the first layer's q(u) did not move", ng)
		}
		for p := 0; p < tr.lb.n; p++ {
			for k, q := range tr.isQ {
				if q && (tr.lb.s[p][k] != 0 || tr.lb.y[p][k] != 0) {
					t.Fatalf("L-BFGS's memory pair %d holds a q(u) entry the natural gradient steps", p)
				}
			}
		}
	}
	t.Logf("bound from %.2f after 60 iterations: %.2f without natural gradients, %.2f with", r0, final[false], final[true])
	if final[true] < final[false] {
		t.Errorf("with natural gradients the bound reached %.4f, without %.4f", final[true], final[false])
	}
}
