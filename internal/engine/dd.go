package engine

import (
	"math"
	"math/big"
)

// dd is a double-double number hi + lo (|lo| ≲ ulp(hi)): about 106 bits,
// enough that a Ψ2 entry's own rounding no longer counts once it is
// whitened (rbfPsi2.sumExact).
//
// The operations are the classic error-free transformations (Dekker,
// Knuth; TwoProduct by FMA), as in Hida, Li and Bailey's QD library,
// with the normalisations that keep the relative error at a few 2⁻¹⁰⁶.
type dd struct{ hi, lo float64 }

// twoProd returns fl(a·b) and its rounding error, exactly.
func twoProd(a, b float64) (p, e float64) {
	p = a * b
	return p, math.FMA(a, b, -p)
}

// quickTwoSum is twoSum for |a| ≥ |b| (or a = 0).
func quickTwoSum(a, b float64) (s, e float64) {
	s = a + b
	return s, b - (s - a)
}

func ddAdd(a, b dd) dd {
	s, e := twoSum(a.hi, b.hi)
	t, f := twoSum(a.lo, b.lo)
	e += t
	s, e = quickTwoSum(s, e)
	e += f
	s, e = quickTwoSum(s, e)
	return dd{s, e}
}

// ddAddPos is a + b for a and b of the same sign, where no cancellation
// needs ddAdd's second error term (QD's "sloppy" addition).
func ddAddPos(a, b dd) dd {
	s, e := twoSum(a.hi, b.hi)
	e += a.lo + b.lo
	s, e = quickTwoSum(s, e)
	return dd{s, e}
}

func ddNeg(a dd) dd { return dd{-a.hi, -a.lo} }

func ddMul(a, b dd) dd {
	p, e := twoProd(a.hi, b.hi)
	e += a.hi*b.lo + a.lo*b.hi
	p, e = quickTwoSum(p, e)
	return dd{p, e}
}

// ddMulF is a·b for a float64 b.
func ddMulF(a dd, b float64) dd {
	p, e := twoProd(a.hi, b)
	e += a.lo * b
	p, e = quickTwoSum(p, e)
	return dd{p, e}
}

// ddDiv is a/b by long division: three float64 quotients.
func ddDiv(a, b dd) dd {
	q1 := a.hi / b.hi
	r := ddAdd(a, ddNeg(ddMulF(b, q1)))
	q2 := r.hi / b.hi
	r = ddAdd(r, ddNeg(ddMulF(b, q2)))
	q3 := r.hi / b.hi
	s, e := quickTwoSum(q1, q2)
	return ddAdd(dd{s, e}, dd{q3, 0})
}

// ddSqrt is √a for a ≥ 0: one Newton step from the float64 root.
func ddSqrt(a dd) dd {
	if a.hi <= 0 {
		return dd{}
	}
	x := math.Sqrt(a.hi)
	p, e := twoProd(x, x)
	r := ((a.hi - p) - e) + a.lo
	s, t := quickTwoSum(x, r/(2*x))
	return dd{s, t}
}

// exp's argument reduction: x = k·ln2/expSteps + r, |r| ≤ ln2/(2·expSteps),
// and exp(x) = 2^(k div expSteps) · 2^((k mod expSteps)/expSteps) · exp(r).
const expSteps = 256

var (
	// ln2/expSteps as hi + lo (hi: ln2 rounded to float64, lo the rest;
	// fdlibm's ln2_lo), scaled exactly.
	ln2StepHi = 6.93147180559945286227e-01 / expSteps
	ln2StepLo = 2.31904681384629955842e-17 / expSteps
	// exp2Table[j] = 2^(j/expSteps), correctly rounded to double-double.
	exp2Table = makeExp2Table()
)

func makeExp2Table() [expSteps]dd {
	const prec = 200
	root := new(big.Float).SetPrec(prec).SetInt64(2)
	for range 8 { // expSteps = 2⁸
		root.Sqrt(root)
	}
	var t [expSteps]dd
	p := new(big.Float).SetPrec(prec).SetInt64(1)
	for j := range t {
		hi, _ := p.Float64()
		rest := new(big.Float).SetPrec(prec).Sub(p, new(big.Float).SetFloat64(hi))
		lo, _ := rest.Float64()
		t[j] = dd{hi, lo}
		p.Mul(p, root)
	}
	return t
}

// ddExp is exp(x) to a relative error of ~1e-22, well below a float64
// ulp's 1.1e-16 (TestDDArithmetic): the reduced argument's powers past
// the first are summed in float64, which costs nothing at that level.
// Arguments below −745 (exp underflows float64) give 0, −Inf included;
// above 709.8 (it overflows) +Inf.
// The result need not be normalised (|lo| may exceed ulp(hi)/2).
func ddExp(x dd) dd {
	if !(x.hi > -745) {
		return dd{}
	}
	if x.hi > 709.8 {
		return dd{math.Inf(1), 0}
	}
	// k = x·expSteps/ln2 rounded to an integer by adding and taking away
	// 1.5·2⁵² (exact for |k| < 2⁵¹; math.Round is a call without SSE4.1)
	kf := (x.hi*(expSteps/math.Ln2) + 0x1.8p52) - 0x1.8p52
	p, e := twoProd(kf, ln2StepHi)
	e = math.FMA(kf, ln2StepLo, e)
	// r = x − k·ln2/expSteps: x.hi − p is exact (Sterbenz: within a
	// factor 2 of each other, or p = 0); normalised, so that rl·rh² is
	// negligible below.
	rh, rl := twoSum(x.hi-p, x.lo-e)
	// exp(r) = 1 + a + rl·(1 + rh) with a = rh + rh²/2 + … + rh⁶/720, the
	// powers past the first in float64 (they are below 1e-6; rh⁷/5040 <
	// 2e-24), by Estrin's scheme (independent products, shorter chains).
	r2 := rh * rh
	poly := r2*(1.0/2+rh*(1.0/6)) + r2*r2*(1.0/24+rh*(1.0/120)+r2*(1.0/720))
	a, ae := twoSum(rh, poly)
	s, t := quickTwoSum(1, a)
	t += ae + rl*(1+rh)
	k := int(kf)
	tj := exp2Table[k&(expSteps-1)]
	yh, yl := twoProd(tj.hi, s)
	yl += tj.hi*t + tj.lo*s
	sh := k >> 8 // k div expSteps, rounding down
	if sh > -1000 && sh < 1000 {
		// 2^sh and the products exact (y.lo stays normal): a
		// multiplication, not Ldexp's checks
		f := math.Float64frombits(uint64(sh+1023) << 52)
		return dd{yh * f, yl * f}
	}
	return dd{math.Ldexp(yh, sh), math.Ldexp(yl, sh)}
}
