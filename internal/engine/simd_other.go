//go:build !amd64 || purego

package engine

// Without the amd64 assembly the portable Go code runs everywhere.
const haveSIMD = false

var useSIMD = false

func expAVX2(x *float64, n int) { panic("engine: no assembly kernels on this platform") }

func psi2PairsAVX2(tab, acc, par, lanes *float64, blocks, q int, grad, sum bool) {
	panic("engine: no assembly kernels on this platform")
}

func psi2Pairs3AVX2(tab, acc, par, lanes *float64, blocks, q int, grad, sum bool) {
	panic("engine: no assembly kernels on this platform")
}

func gemmAVX2(m, n, k int, alpha float64, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	panic("engine: no assembly kernels on this platform")
}
