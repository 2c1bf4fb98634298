package engine

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// mm computes c (m×n) = alpha·op(a)·op(b) + beta·c for row-major slices,
// where op(a) is m×k (a is stored k×m when ta) and op(b) is k×n (b is
// stored n×k when tb). Small products, the common case in a layer with a
// few inducing points, run in plain loops: BLAS's blocking costs more than
// it saves below about 32³ multiply-adds.
func mm(c []float64, m, n, k int, a []float64, ta bool, b []float64, tb bool, alpha, beta float64) {
	if m*n*k > smallProduct || (ta && tb) {
		opA, lda := blas.NoTrans, k
		if ta {
			opA, lda = blas.Trans, m
		}
		opB, ldb := blas.NoTrans, n
		if tb {
			opB, ldb = blas.Trans, k
		}
		blas64.Implementation().Dgemm(opA, opB, m, n, k, alpha, a, lda, b, ldb, beta, c, n)
		return
	}
	c = c[:m*n]
	switch beta {
	case 0:
		clear(c)
	case 1:
	default:
		for i := range c {
			c[i] *= beta
		}
	}
	switch {
	case !ta && !tb:
		for i := 0; i < m; i++ {
			rowTimes(c[i*n:(i+1)*n], a[i*k:(i+1)*k], b, n, alpha)
		}
	case ta && !tb:
		for l := 0; l < k; l++ {
			brow := b[l*n : (l+1)*n]
			for i, av := range a[l*m : (l+1)*m] {
				if av == 0 {
					continue
				}
				t := alpha * av
				crow := c[i*n : (i+1)*n]
				for j, bv := range brow {
					crow[j] += t * bv
				}
			}
		}
	default: // !ta && tb
		for i := 0; i < m; i++ {
			rowTimesT(c[i*n:(i+1)*n], a[i*k:(i+1)*k], b, alpha)
		}
	}
}

// rowTimes adds alpha·x·b to crow for a row x (length k) and a row-major
// k×n b. Four columns at a time keep four independent sums in registers
// rather than loading and storing crow for every product.
func rowTimes(crow, x, b []float64, n int, alpha float64) {
	j := 0
	for ; j+4 <= n; j += 4 {
		var s0, s1, s2, s3 float64
		for l, xv := range x {
			bb := b[l*n+j : l*n+j+4 : l*n+j+4]
			s0 += xv * bb[0]
			s1 += xv * bb[1]
			s2 += xv * bb[2]
			s3 += xv * bb[3]
		}
		cc := crow[j : j+4 : j+4]
		cc[0] += alpha * s0
		cc[1] += alpha * s1
		cc[2] += alpha * s2
		cc[3] += alpha * s3
	}
	for ; j < n; j++ {
		var s float64
		for l, xv := range x {
			s += xv * b[l*n+j]
		}
		crow[j] += alpha * s
	}
}

// rowTimesT adds alpha·x·bᵀ to crow for a row x (length k) and a
// row-major len(crow)×k b: four dot products at a time.
func rowTimesT(crow, x, b []float64, alpha float64) {
	k, n := len(x), len(crow)
	j := 0
	for ; j+4 <= n; j += 4 {
		b0 := b[j*k : (j+1)*k]
		b1 := b[(j+1)*k : (j+2)*k]
		b2 := b[(j+2)*k : (j+3)*k]
		b3 := b[(j+3)*k : (j+4)*k]
		var s0, s1, s2, s3 float64
		for l, xv := range x {
			s0 += xv * b0[l]
			s1 += xv * b1[l]
			s2 += xv * b2[l]
			s3 += xv * b3[l]
		}
		cc := crow[j : j+4 : j+4]
		cc[0] += alpha * s0
		cc[1] += alpha * s1
		cc[2] += alpha * s2
		cc[3] += alpha * s3
	}
	for ; j < n; j++ {
		crow[j] += alpha * dot(x, b[j*k:(j+1)*k])
	}
}

// smallProduct is the number of multiply-adds below which mm uses plain
// loops rather than BLAS (measured with BenchmarkBoundGradient).
const smallProduct = 32 * 32 * 32

// triGram sets c (m×m) = Σ_d L_d L_dᵀ for lower triangular L_d stored
// side by side in the rows of lcat (m × m·d). It reorders lcat into lp
// (returned for reuse) with the d entries (i, l) of the L_d adjacent, so
// that element (i, j ≤ i) is one dot product over the columns l ≤ j that
// are not zero: a third of a full product, in long loops.
func triGram(c []float64, m, d int, lcat, lp []float64) []float64 {
	lp = resize(lp, m*m*d)
	for i := 0; i < m; i++ {
		for k := 0; k < d; k++ {
			for l, v := range lcat[i*m*d+k*m : i*m*d+k*m+i+1] {
				lp[(i*m+l)*d+k] = v
			}
		}
	}
	for i := 0; i < m; i++ {
		ri := lp[i*m*d : (i*m+i+1)*d]
		for j := 0; j <= i; j++ {
			s := dot(ri[:(j+1)*d], lp[j*m*d:(j*m+j+1)*d])
			c[i*m+j], c[j*m+i] = s, s
		}
	}
	return lp
}

// quad returns xᵀ W x for a symmetric M×M W.
func quad(x, w []float64) float64 {
	m := len(x)
	var t float64
	for i, xi := range x {
		row := w[i*m : (i+1)*m]
		var r float64
		for j, xj := range x {
			r += row[j] * xj
		}
		t += xi * r
	}
	return t
}

// resize returns s with length n, reusing its storage when it can. The
// contents are not cleared.
func resize(s []float64, n int) []float64 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]float64, n)
}

// rawCopy copies a into dst as a contiguous row-major slice.
func rawCopy(dst []float64, a mat.Matrix) []float64 {
	r, c := a.Dims()
	dst = resize(dst, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			dst[i*c+j] = a.At(i, j)
		}
	}
	return dst
}

// symmetrize sets w to (w + wᵀ)/2.
func symmetrize(w []float64, m int) {
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			v := 0.5 * (w[i*m+j] + w[j*m+i])
			w[i*m+j], w[j*m+i] = v, v
		}
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

type blas64General = blas64.General

type denseSetter interface {
	Dims() (int, int)
	Set(i, j int, v float64)
}
