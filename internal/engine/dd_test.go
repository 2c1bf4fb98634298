package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ddErr is |a − want| / |want| with a in double-double, computed in big
// floats.
func ddErr(a dd, want bf) float64 {
	got := badd(bfl(a.hi), bfl(a.lo))
	if want.Sign() == 0 {
		return math.Abs(bf64(got))
	}
	return math.Abs(bf64(bquo(bsub(got, want), want)))
}

func randDD(rng *rand.Rand, scale float64) dd {
	hi := scale * rng.NormFloat64()
	return dd{hi, hi * 0x1p-53 * (rng.Float64() - 0.5)}
}

func bdd(a dd) bf { return badd(bfl(a.hi), bfl(a.lo)) }

// TestDDArithmetic checks the double-double operations against 128-bit
// big floats: each within a few 2⁻¹⁰⁶ ≈ 1.2e-32 (QD's bounds), and exp
// within 1e-21 (ddExp's float64 tail), on arguments from the Ψ2 loop's
// range (exponents from −600 to 0; below, exp(x)·2⁻⁵³ is subnormal) and around.
func TestDDArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const ops = 1e-30
	var worst [6]float64
	for range 2000 {
		a, b := randDD(rng, math.Exp(4*rng.NormFloat64())), randDD(rng, math.Exp(4*rng.NormFloat64()))
		worst[0] = max(worst[0], ddErr(ddAdd(a, b), badd(bdd(a), bdd(b)))*math.Abs(bf64(badd(bdd(a), bdd(b))))/(math.Abs(a.hi)+math.Abs(b.hi)))
		worst[1] = max(worst[1], ddErr(ddMul(a, b), bmul(bdd(a), bdd(b))))
		worst[2] = max(worst[2], ddErr(ddDiv(a, b), bquo(bdd(a), bdd(b))))
		aa := dd{math.Abs(a.hi), math.Copysign(a.lo, a.hi)}
		worst[3] = max(worst[3], ddErr(ddSqrt(aa), bsqrt(bdd(aa))))
		worst[4] = max(worst[4], ddErr(ddMulF(a, b.hi), bmul(bdd(a), bfl(b.hi))))
		x := dd{-600 * rng.Float64(), 0} // below, the low part is subnormal
		if rng.IntN(2) == 0 {
			x = randDD(rng, 3)
		}
		x.lo = x.hi * 0x1p-53 * (rng.Float64() - 0.5)
		worst[5] = max(worst[5], ddErr(ddExp(x), bexp(bdd(x))))
	}
	for i, name := range []string{"add (of |a|+|b|)", "mul", "div", "sqrt", "mulF"} {
		t.Logf("%s: max rel err %.2e", name, worst[i])
		if !(worst[i] < ops) {
			t.Errorf("dd %s: rel err %.3g, want < %g", name, worst[i], ops)
		}
	}
	t.Logf("exp: max rel err %.2e", worst[5])
	if !(worst[5] < 1e-21) {
		t.Errorf("ddExp: rel err %.3g, want < 1e-21", worst[5])
	}
	for _, x := range []float64{math.Inf(-1), -746, math.NaN()} {
		if y := ddExp(dd{x, 0}); y != (dd{}) {
			t.Errorf("ddExp(%v) = %v, want 0", x, y)
		}
	}
	if y := ddExp(dd{710, 0}); !math.IsInf(y.hi, 1) {
		t.Errorf("ddExp(710) = %v, want +Inf", y)
	}
	if y := ddExp(dd{}); y != (dd{1, 0}) {
		t.Errorf("ddExp(0) = %v, want 1", y)
	}
}

// TestSumExact checks ΣΨ2 summed from double-double entries (sumExact)
// against Ψ2's definition in 128-bit big floats, independently computed:
// within 1e-20 of the largest entry (the entries' ~1e-21 and the float64
// tail's, exactTailExp), where float64 entries summed exactly are off by up
// to ~1e-16 (the test's own float64 comparison shows the gap).
func TestSumExact(t *testing.T) {
	// 9 and 12: wider than sumExact's stack buffers of 8 dimensions were,
	// past which it panicked
	for _, q := range []int{1, 3, 5, 9, 12} {
		rng := rand.New(rand.NewPCG(uint64(q), 9))
		m := 7
		k, z, p := randomPsi2(rng, q, m)
		if q > 8 {
			// Inducing inputs as close as where the exact sum runs (an
			// ill-conditioned Kuu): at random ones 12 dimensions apart
			// every entry is e⁻⁶ of σ⁴ or less, and the float64 tail
			// (exactTailExp), bounded relative to σ⁴, exceeds 1e-20 of
			// the largest.
			for i := range z {
				z[i] *= 0.3
			}
			p = k.newPsi2(z, m, nil).(*rbfPsi2)
		}
		ls := k.Lengthscales
		g := make([]float64, m*m)
		p.setWeights(g, g, g)
		p.setCompensated(true)
		acc := &psi2Acc{buf: make([]float64, p.accLen())}
		want := make([]bf, m*m)
		var plain []float64 = make([]float64, m*m)
		for i := range want {
			want[i] = bnew()
		}
		mu, s, psi1 := make([]float64, q), make([]float64, q), make([]float64, m)
		dMu, dS := make([]float64, q), make([]float64, q)
		for range 40 {
			for r := range mu {
				mu[r], s[r] = rng.NormFloat64(), 0.3*rng.Float64()
			}
			k.psi1(psi1, mu, s, z, nil)
			p.datum(acc, mu, s, psi1, dMu, dS)
			// Ψ2_ij = σ⁴ ∏_r (1 + 2s_r/ℓ_r²)^(−½)
			//         · exp(−Σ_r (z_ir − z_jr)²/(4ℓ_r²) − Σ_r (μ_r − z̄_r)²/(ℓ_r² + 2s_r))
			pre := bmul(bfl(k.Variance), bfl(k.Variance))
			for r, l := range ls {
				l2 := bmul(bfl(l), bfl(l))
				pre = bquo(pre, bsqrt(badd(bfl(1), bquo(bmul(bfl(2), bfl(s[r])), l2))))
			}
			for i := range m {
				for j := range m {
					e := bnew()
					for r, l := range ls {
						l2 := bmul(bfl(l), bfl(l))
						d := bsub(bfl(z[i*q+r]), bfl(z[j*q+r]))
						e = bsub(e, bquo(bmul(d, d), bmul(bfl(4), l2)))
						zb := bquo(badd(bfl(z[i*q+r]), bfl(z[j*q+r])), bfl(2))
						dm := bsub(bfl(mu[r]), zb)
						e = bsub(e, bquo(bmul(dm, dm), badd(l2, bmul(bfl(2), bfl(s[r])))))
					}
					v := bmul(pre, bexp(e))
					want[i*m+j].Add(want[i*m+j], v)
					plain[i*m+j] += bf64(v) // float64 entries (correctly rounded), summed in float64
				}
			}
		}
		hi, lo := make([]float64, m*m), make([]float64, m*m)
		p.sum2(acc, hi, lo)
		var worst, worstPlain, scale float64
		for i := range want {
			scale = max(scale, math.Abs(bf64(want[i])))
		}
		for i := range want {
			worst = max(worst, math.Abs(bf64(bsub(badd(bfl(hi[i]), bfl(lo[i])), want[i]))))
			worstPlain = max(worstPlain, math.Abs(bf64(bsub(bfl(plain[i]), want[i]))))
		}
		t.Logf("q %d: ΣΨ2 hi + lo off by %.2e of its largest entry (float64 entries and sums: %.2e)", q, worst/scale, worstPlain/scale)
		if !(worst <= 1e-20*scale) {
			t.Errorf("q %d: exact ΣΨ2 off by %.3g of its largest entry, want ≤ 1e-20", q, worst/scale)
		}
	}
}
