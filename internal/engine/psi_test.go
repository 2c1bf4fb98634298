package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// psiStats returns ψ0, ψ1 (M) and Ψ2 (M×M) for one input through the
// exported PsiStats, which shares the bound's code paths.
func psiStats(k Kernel, z []float64, mu, s []float64) (float64, []float64, []float64) {
	m := len(z) / k.InputDim()
	p1, p2 := make([]float64, m), make([]float64, m*m)
	return PsiStats(k, z, mu, s, p1, p2), p1, p2
}

// TestPsiMonteCarlo compares the analytic psi statistics with Monte Carlo
// averages of k(h,h), k(h,z_m) and k(z_m,h)k(h,z_m') under h ~ N(μ, diag s),
// to within 5 standard errors.
func TestPsiMonteCarlo(t *testing.T) {
	kernels := []Kernel{
		NewRBF(1.4, []float64{0.7}),
		NewRBF(0.8, []float64{0.5, 1.2, 0.9}),
		NewLinear([]float64{0.6, 1.5}),
	}
	for ki, k := range kernels {
		t.Run(fmt.Sprintf("%s-%d", k.Name(), k.InputDim()), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ki), 11))
			q := k.InputDim()
			const m = 3
			z := make([]float64, m*q)
			for i := range z {
				z[i] = rng.Float64()*2 - 1
			}
			mu := make([]float64, q)
			s := make([]float64, q)
			for j := range mu {
				mu[j] = rng.Float64() - 0.5
				s[j] = 0.05 + 0.4*rng.Float64()
			}
			p0, p1, p2 := psiStats(k, z, mu, s)

			const n = 200000
			// Running sums of each statistic and of its square, for the
			// standard errors.
			stat := make([]float64, 1+m+m*m)
			stat2 := make([]float64, len(stat))
			h := make([]float64, q)
			kz := make([]float64, m)
			for it := 0; it < n; it++ {
				for j := range h {
					h[j] = mu[j] + math.Sqrt(s[j])*rng.NormFloat64()
				}
				for i := 0; i < m; i++ {
					kz[i] = k.Eval(h, z[i*q:(i+1)*q])
				}
				v := k.Eval(h, h)
				stat[0] += v
				stat2[0] += v * v
				for i := 0; i < m; i++ {
					stat[1+i] += kz[i]
					stat2[1+i] += kz[i] * kz[i]
					for j := 0; j < m; j++ {
						w := kz[i] * kz[j]
						stat[1+m+i*m+j] += w
						stat2[1+m+i*m+j] += w * w
					}
				}
			}
			want := append(append([]float64{p0}, p1...), p2...)
			for i := range stat {
				mean := stat[i] / n
				se := math.Sqrt((stat2[i]/n - mean*mean) / n)
				if math.Abs(mean-want[i]) > 5*se+1e-12 {
					t.Errorf("statistic %d: analytic %.6g, Monte Carlo %.6g ± %.2g", i, want[i], mean, se)
				}
			}
		})
	}
}

// TestPsiCertainInput: with zero input variance ψ1 = k(x, Z), ψ0 = k(x,x)
// and Ψ2 = ψ1ᵀψ1 exactly.
func TestPsiCertainInput(t *testing.T) {
	for _, k := range []Kernel{NewRBF(1.1, []float64{0.3, 2}), NewLinear([]float64{0.5, 2})} {
		z := []float64{0.1, -0.4, 0.9, 0.2, -1.3, 0.5}
		x := []float64{0.35, -0.2}
		p0, p1, p2 := psiStats(k, z, x, []float64{0, 0})
		if d := p0 - k.Eval(x, x); math.Abs(d) > 1e-15 {
			t.Errorf("%s: ψ0 off by %g", k.Name(), d)
		}
		nilS := make([]float64, 3)
		k.psi1(nilS, x, nil, z, nil)
		for i := 0; i < 3; i++ {
			kx := k.Eval(x, z[2*i:2*i+2])
			if math.Abs(p1[i]-kx) > 1e-15 || math.Abs(nilS[i]-kx) > 1e-15 {
				t.Errorf("%s: ψ1[%d] = %g (s=0) / %g (certain), k(x,z) = %g", k.Name(), i, p1[i], nilS[i], kx)
			}
			for j := 0; j < 3; j++ {
				if d := p2[i*3+j] - p1[i]*p1[j]; math.Abs(d) > 1e-14 {
					t.Errorf("%s: Ψ2[%d][%d] − ψ1ψ1 = %g", k.Name(), i, j, d)
				}
			}
		}
	}
}

// TestRBFCovMatchesEval: Cov's vectorised RBF path gives k(a, b) as Eval
// computes it (with math.Exp), to a few ulp of the exponent, on both
// kernel paths.
func TestRBFCovMatchesEval(t *testing.T) {
	forEachKernelPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(12, 13))
		for _, q := range []int{1, 3, 9} {
			ls := make([]float64, q)
			for i := range ls {
				ls[i] = 0.3 + rng.Float64()
			}
			k := NewRBF(1.7, ls)
			a := make([]float64, 7*q)
			b := make([]float64, 5*q)
			for i := range a {
				a[i] = 3 * rng.NormFloat64()
			}
			for i := range b {
				b[i] = 3 * rng.NormFloat64()
			}
			got := make([]float64, 7*5)
			Cov(k, got, a, b)
			for i := range 7 {
				for j := range 5 {
					want := k.Eval(a[i*q:(i+1)*q], b[j*q:(j+1)*q])
					// exp(x) carries the rounding of x times |x|: the
					// exponents are summed in a different order.
					x := math.Abs(math.Log(want / 1.7))
					if d := math.Abs(got[i*5+j] - want); d > 1e-15*(1+x)*want {
						t.Errorf("q=%d: Cov[%d][%d] = %v, Eval %v", q, i, j, got[i*5+j], want)
					}
				}
			}
		}
	})
}
