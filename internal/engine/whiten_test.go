package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"dgpviz/internal/linalg"
)

// TestWhitenCompensated checks W·(hi + lo)·Wᵀ against big floats for a W
// of a badly conditioned Kuu (entries ~1e4) and an x whose whitened
// product is ~1e8 times smaller than the terms: the compensated product
// is exact to a few ulps of the result, where float64 products lose ~1e-8
// of it.
func TestWhitenCompensated(t *testing.T) {
	for _, m := range []int{1, 5, 12, 17} {
		rng := rand.New(rand.NewPCG(uint64(m), 5))
		// Kuu of m close inducing points, its factor L, W = L⁻¹.
		z := make([]float64, m)
		for i := range z {
			z[i] = 0.15 * float64(i)
		}
		k := NewRBF(1, []float64{1})
		w := &layerWork{}
		kuu := make([]float64, m*m)
		Cov(k, kuu, z, z)
		for i := 0; i < m; i++ {
			kuu[i*m+i] += 1e-6
		}
		chol := make([]float64, m*m)
		if !linalg.Cholesky(chol, kuu, m) {
			t.Fatal("not positive definite")
		}
		w.m = m
		w.lwT = make([]float64, m*m)
		w.lw = make([]float64, m*m)
		linalg.LowerInverseT(w.lwT, chol, m)
		transpose(w.lw, w.lwT, m, m, m)
		// x = Kuu·Y·Kuu + a tiny symmetric lo: W·x·Wᵀ = Lᵀ·Y·L is small.
		y := make([]float64, m*m)
		for i := 0; i < m; i++ {
			for j := 0; j <= i; j++ {
				y[i*m+j] = rng.NormFloat64()
				y[j*m+i] = y[i*m+j]
			}
		}
		tmp, hi := make([]float64, m*m), make([]float64, m*m)
		mm(tmp, m, m, m, kuu, false, y, false, 1, 0)
		mm(hi, m, m, m, tmp, false, kuu, false, 1, 0)
		linalg.Symmetrize(hi, m)
		lo := make([]float64, m*m)
		for i := 0; i < m; i++ {
			for j := 0; j <= i; j++ {
				lo[i*m+j] = 1e-17 * rng.NormFloat64()
				lo[j*m+i] = lo[i*m+j]
			}
		}
		got := make([]float64, m*m)
		whitenCompensated(got, hi, lo, w.lw, w.lwT, m, make([]float64, m*m), make([]float64, m*m), make([]float64, m))
		x := make([][]bf, m)
		wb := make([][]bf, m)
		for i := range m {
			x[i] = make([]bf, m)
			wb[i] = make([]bf, m)
			for j := range m {
				x[i][j] = badd(bfl(hi[i*m+j]), bfl(lo[i*m+j]))
				wb[i][j] = bfl(w.lw[i*m+j])
			}
		}
		want := wxwt(wb, x)
		plain := make([]float64, m*m)
		w.whiten(plain, hi, tmp)
		var scale, errC, errP float64
		for i := range m {
			for j := range m {
				v := bf64(want[i][j])
				scale = math.Max(scale, math.Abs(v))
				errC = math.Max(errC, math.Abs(got[i*m+j]-v))
				errP = math.Max(errP, math.Abs(plain[i*m+j]-v))
			}
		}
		t.Logf("M=%d: compensated %.2e, float64 %.2e of max %.3g", m, errC/scale, errP/scale, scale)
		if errC > 1e-14*scale {
			t.Errorf("M=%d: compensated W·x·Wᵀ off by %.2e of its scale", m, errC/scale)
		}
	}
}
