package engine

import "math"

// expTable[j] = 2^(j/64).
var expTable = func() [64]float64 {
	var t [64]float64
	for j := range t {
		t[j] = math.Exp2(float64(j) / 64)
	}
	return t
}()

const (
	expInvLn2x64 = 64 / math.Ln2
	// fdlibm's split of ln 2 into a head with trailing zero bits (so that
	// k·head is exact for |k| < 2^20) and a tail, divided by 64.
	expLn2HiDiv64 = 6.93147180369123816490e-01 / 64
	expLn2LoDiv64 = 1.90821492927058770002e-10 / 64
)

// fastExp returns e^x with a relative error of a few ulp. It is the psi
// statistics' hot path: table-driven range reduction to |r| ≤ ln2/128 and
// a degree-5 polynomial, about three times faster than math.Exp. Outside
// [−700, 700] and for NaN it defers to math.Exp.
func fastExp(x float64) float64 {
	if !(x > -700 && x < 700) {
		return math.Exp(x)
	}
	k := math.Floor(x*expInvLn2x64 + 0.5)
	r := x - k*expLn2HiDiv64 - k*expLn2LoDiv64
	ki := int64(k)
	r2 := r * r
	// Estrin-style evaluation of 1 + r + r²/2 + r³/6 + r⁴/24 + r⁵/120.
	p := (1 + r) + r2*((0.5+r*(1.0/6))+r2*(1.0/24+r*(1.0/120)))
	v := expTable[ki&63] * p
	return math.Float64frombits(math.Float64bits(v) + uint64(ki>>6)<<52)
}
