package engine

import "math"

// expTable[j] = 2^(j/256).
var expTable = func() [256]float64 {
	var t [256]float64
	for j := range t {
		t[j] = math.Exp2(float64(j) / 256)
	}
	return t
}()

const (
	expInvLn2x256 = 256 / math.Ln2
	// fdlibm's split of ln 2 into a head with trailing zero bits (so that
	// k·head is exact for |k| < 2^20) and a tail, divided by 256.
	expLn2HiDiv256 = 6.93147180369123816490e-01 / 256
	expLn2LoDiv256 = 1.90821492927058770002e-10 / 256
	// Adding 1.5·2^52 rounds to an integer held in the low mantissa bits:
	// cheaper than math.Floor and a float-to-int conversion.
	expShift     = 0x1.8p52
	expShiftBits = 0x4338000000000000
)

// expAll replaces every x in xs by e^x with a relative error of a few
// ulp. It is the psi statistics' hot path: four at a time in AVX2
// assembly where the CPU has it (simd_amd64.s), otherwise expAllGo.
// The last len(xs) mod 4 go through the assembly too, padded, so that
// every element gets the same arithmetic wherever it is in xs.
func expAll(xs []float64) {
	if !useSIMD {
		expAllGo(xs)
		return
	}
	n := len(xs) &^ 3
	if n > 0 {
		expAVX2(&xs[0], n)
	}
	if tail := xs[n:]; len(tail) > 0 {
		var buf [4]float64
		copy(buf[:], tail)
		expAVX2(&buf[0], 4)
		copy(tail, buf[:])
	}
}

// expAllGo is expAll in Go: table-driven range reduction to |r| ≤ ln2/512
// and a degree-4 polynomial, about three times faster than math.Exp, in a
// loop without calls. Outside [−700, 700] and for NaN it defers to
// math.Exp.
func expAllGo(xs []float64) {
	for i, x := range xs {
		if !(x > -700 && x < 700) {
			xs[i] = math.Exp(x)
			continue
		}
		kd := x*expInvLn2x256 + expShift
		ki := int64(math.Float64bits(kd) - expShiftBits)
		k := kd - expShift
		r := x - k*expLn2HiDiv256 - k*expLn2LoDiv256
		r2 := r * r
		// Estrin-style evaluation of 1 + r + r²/2 + r³/6 + r⁴/24.
		p := (1 + r) + r2*((0.5+r*(1.0/6))+r2*(1.0/24))
		v := expTable[ki&255] * p
		xs[i] = math.Float64frombits(math.Float64bits(v) + uint64(ki>>8)<<52)
	}
}

// fastExp is expAll for one number.
func fastExp(x float64) float64 {
	xs := [1]float64{x}
	expAll(xs[:])
	return xs[0]
}
