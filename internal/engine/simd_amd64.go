//go:build amd64 && !purego

package engine

// haveSIMD reports whether this CPU and OS support AVX2 and FMA, which the
// assembly kernels in simd_amd64.s need.
var haveSIMD = detectAVX2FMA()

// useSIMD selects the assembly kernels. Tests turn it off to check the
// portable Go code against them.
var useSIMD = haveSIMD

// expAVX2 replaces x[0:n] by their exponentials; n is a multiple of 4.
//
//go:noescape
func expAVX2(x *float64, n int)

// psi2PairsAVX2 and psi2Pairs3AVX2 run the Ψ2 pair loop over blocks of
// four pairs for input dimension q (psi2Pairs3AVX2: q ≤ 3, with its sums
// in registers), adding to ΣΨ2 when sum is set (else rbfPsi2.sumExact
// does); the layout is rbfPsi2's, documented in simd_amd64.s.
//
//go:noescape
func psi2PairsAVX2(tab, acc, par, lanes *float64, blocks, q int, grad, sum bool)

//go:noescape
func psi2Pairs3AVX2(tab, acc, par, lanes *float64, blocks, q int, grad, sum bool)

// gemmAVX2 adds alpha·A·B to C (row-major, leading dimensions in
// elements) for m a multiple of 4, n of 8 and k ≥ 1; see gemmNN.
//
//go:noescape
func gemmAVX2(m, n, k int, alpha float64, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
func xgetbv() (eax, edx uint32)

// detectAVX2FMA checks the CPUID feature bits and that the OS saves the
// ymm registers (XCR0 bits 1 and 2), as Go's internal/cpu does.
func detectAVX2FMA() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&6 != 6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const avx2 = 1 << 5
	return ebx7&avx2 != 0
}
