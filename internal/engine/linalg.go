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
			crow := c[i*n : (i+1)*n]
			for l, av := range a[i*k : (i+1)*k] {
				if av == 0 {
					continue
				}
				t := alpha * av
				for j, bv := range b[l*n : (l+1)*n] {
					crow[j] += t * bv
				}
			}
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
			arow := a[i*k : (i+1)*k]
			crow := c[i*n : (i+1)*n]
			for j := range crow {
				crow[j] += alpha * dot(arow, b[j*k:(j+1)*k])
			}
		}
	}
}

// smallProduct is the number of multiply-adds below which mm uses plain
// loops rather than BLAS (measured with BenchmarkBoundGradient).
const smallProduct = 32 * 32 * 32

// gram sets c (m×m) = aᵀa for a row-major n×m a: half the products of
// mm, by symmetry.
func gram(c []float64, m, n int, a []float64) {
	if m*m*n <= smallProduct {
		mm(c, m, m, n, a, true, a, false, 1, 0)
		return
	}
	blas64.Implementation().Dsyrk(blas.Upper, blas.Trans, m, n, 1, a, m, 0, c, m)
	mirrorUpper(c, m)
}

// gramRows sets c (m×m) = a·aᵀ for a row-major m×k a.
func gramRows(c []float64, m, k int, a []float64) {
	if m*m*k <= smallProduct {
		mm(c, m, m, k, a, false, a, true, 1, 0)
		return
	}
	blas64.Implementation().Dsyrk(blas.Upper, blas.NoTrans, m, k, 1, a, k, 0, c, m)
	mirrorUpper(c, m)
}

// mirrorUpper copies the upper triangle of the m×m c onto its lower one.
func mirrorUpper(c []float64, m int) {
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			c[j*m+i] = c[i*m+j]
		}
	}
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
