package engine

import (
	"dgpviz/internal/linalg"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// mm computes c (m×n) = alpha·op(a)·op(b) + beta·c for row-major slices,
// where op(a) is m×k (a is stored k×m when ta) and op(b) is k×n (b is
// stored n×k when tb). Small products, the common case in a layer with a
// few inducing points, run in plain loops: BLAS's blocking costs more than
// it saves below about 32³ multiply-adds.
func mm(c []float64, m, n, k int, a []float64, ta bool, b []float64, tb bool, alpha, beta float64) {
	if useSIMD && !(ta && tb) {
		scaleBy(c[:m*n], beta)
		mmSIMD(c, m, n, k, a, ta, b, tb, alpha)
		return
	}
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
	scaleBy(c, beta)
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

// scaleBy multiplies c by beta; beta = 0 clears c (NaN and Inf too, as
// BLAS does).
func scaleBy(c []float64, beta float64) {
	switch beta {
	case 0:
		clear(c)
	case 1:
	default:
		for i := range c {
			c[i] *= beta
		}
	}
}

// mmSIMD is mm's path on CPUs with AVX2 and FMA: transposed operands are
// copied into row-major scratch, then gemmNN.
func mmSIMD(c []float64, m, n, k int, a []float64, ta bool, b []float64, tb bool, alpha float64) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	if ta {
		buf := getScratch(m * k)
		defer putScratch(buf)
		transpose(*buf, a, k, m, m)
		a = *buf
	}
	if tb {
		buf := getScratch(k * n)
		defer putScratch(buf)
		transpose(*buf, b, n, k, k)
		b = *buf
	}
	gemmNN(m, n, k, alpha, a, k, b, n, c, n)
}

// gemmNN adds alpha·A·B to C for row-major A (m×k, leading dimension
// lda), B (k×n, ldb) and C (m×n, ldc) with the AVX2 kernel, which works
// on blocks of 4 rows × 8 columns. The edges (the last m mod 4 rows and
// n mod 8 columns) are copied into zero-padded blocks so that the kernel
// does them too: a scalar loop over them cost three times the kernel's
// time on the robot model. Only for useSIMD.
func gemmNN(m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	if len(a) < (m-1)*lda+k || len(b) < (k-1)*ldb+n || len(c) < (m-1)*ldc+n || lda < k || ldb < n || ldc < n {
		panic("engine: gemmNN: slice too short for its dimensions")
	}
	if n*k < 32 {
		// Too small to pay for the packing. The test is on a row's work
		// only, so that every row of C is computed the same way whatever
		// the number of rows: a prediction at x does not depend on what
		// else is predicted with it.
		for i := 0; i < m; i++ {
			rowTimes(c[i*ldc:i*ldc+n], a[i*lda:i*lda+k], b, ldb, alpha)
		}
		return
	}
	m4, n8 := m&^3, n&^7
	if m4 > 0 && n8 > 0 {
		gemmAVX2(m4, n8, k, alpha, &a[0], lda, &b[0], ldb, &c[0], ldc)
	}
	if m4 == m && n8 == n {
		return
	}
	// The column edge of B, k×8, and the row edge of A, 4×k.
	var bEdge, aEdge *[]float64
	if n8 < n {
		bEdge = getScratch(k * 8)
		defer putScratch(bEdge)
		packBlock(*bEdge, 8, b[n8:], ldb, k, n-n8)
	}
	if m4 < m {
		aEdge = getScratch(4 * k)
		defer putScratch(aEdge)
		packBlock(*aEdge, k, a[m4*lda:], lda, m-m4, k)
	}
	cBuf := getScratch(4 * (n8 + 8))
	defer putScratch(cBuf)
	// block runs the kernel on an r×w block of C at (i, j), r ≤ rows and
	// w ≤ cols, through a zero-padded copy.
	block := func(i, j, r, w, rows, cols int, ap []float64, lap int, bp []float64, lbp int) {
		cb := (*cBuf)[:rows*cols]
		packBlock(cb, cols, c[i*ldc+j:], ldc, r, w)
		gemmAVX2(rows, cols, k, alpha, &ap[0], lap, &bp[0], lbp, &cb[0], cols)
		for x := 0; x < r; x++ {
			copy(c[(i+x)*ldc+j:(i+x)*ldc+j+w], cb[x*cols:x*cols+w])
		}
	}
	if n8 < n {
		for i := 0; i < m4; i += 4 {
			block(i, n8, 4, n-n8, 4, 8, a[i*lda:], lda, *bEdge, 8)
		}
	}
	if m4 < m {
		if n8 > 0 {
			block(m4, 0, m-m4, n8, 4, n8, *aEdge, k, b, ldb)
		}
		if n8 < n {
			block(m4, n8, m-m4, n-n8, 4, 8, *aEdge, k, *bEdge, 8)
		}
	}
}

// packBlock copies the r×w block of src (leading dimension lds) into the
// top left of dst (leading dimension ld), zeroing the rest of dst.
func packBlock(dst []float64, ld int, src []float64, lds, r, w int) {
	clear(dst)
	for i := 0; i < r; i++ {
		copy(dst[i*ld:i*ld+w], src[i*lds:i*lds+w])
	}
}

// transpose sets dst (c×r, row-major) to the transpose of the r×c block
// of src with leading dimension lds.
// It goes tile by tile, so that the writes, a column apart, stay in a few
// cache lines: twice as fast as row by row for the M × M·D matrices here.
func transpose(dst, src []float64, r, c, lds int) {
	const tile = 8
	dst = dst[:r*c]
	for i0 := 0; i0 < r; i0 += tile {
		i1 := min(i0+tile, r)
		for j0 := 0; j0 < c; j0 += tile {
			j1 := min(j0+tile, c)
			for i := i0; i < i1; i++ {
				for j, v := range src[i*lds+j0 : i*lds+j1] {
					dst[(j0+j)*r+i] = v
				}
			}
		}
	}
}

// scratchPool recycles the transposes' buffers across goroutines.
var scratchPool = sync.Pool{New: func() any { return new([]float64) }}

func getScratch(n int) *[]float64 {
	p := scratchPool.Get().(*[]float64)
	if cap(*p) < n {
		*p = make([]float64, n)
	}
	*p = (*p)[:n]
	return p
}

func putScratch(p *[]float64) { scratchPool.Put(p) }

// rowTimes adds alpha·x·b to crow for a row x (length k) and a row-major
// k×len(crow) b with leading dimension ldb. Four columns at a time keep
// four independent sums in registers rather than loading and storing crow
// for every product.
func rowTimes(crow, x, b []float64, ldb int, alpha float64) {
	n := len(crow)
	j := 0
	for ; j+4 <= n; j += 4 {
		var s0, s1, s2, s3 float64
		for l, xv := range x {
			bb := b[l*ldb+j : l*ldb+j+4 : l*ldb+j+4]
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
			s += xv * b[l*ldb+j]
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
		crow[j] += alpha * linalg.Dot(x, b[j*k:(j+1)*k])
	}
}

// smallProduct is the number of multiply-adds below which mm uses plain
// loops rather than BLAS (measured with BenchmarkBoundGradient).
const smallProduct = 32 * 32 * 32

// quad returns xᵀ W x for a symmetric M×M W, from its upper triangle:
// Σ_i x_i (W_ii x_i + 2 Σ_{j>i} W_ij x_j), half the products of the full
// form.
func quad(x, w []float64) float64 {
	m := len(x)
	var t float64
	for i, xi := range x {
		t += xi * (w[i*m+i]*xi + 2*linalg.Dot(x[i+1:], w[i*m+i+1:(i+1)*m]))
	}
	return t
}

// quadRows sets dst[i] = x_i W x_iᵀ for the r rows x_i of x (r×m) and an
// m×m W: one product X·W, then a dot product per row.
func quadRows(dst, x []float64, r, m int, w []float64) {
	buf := getScratch(r * m)
	defer putScratch(buf)
	t := *buf
	mm(t, r, m, m, x, false, w, false, 1, 0)
	for i := range r {
		dst[i] = linalg.Dot(t[i*m:(i+1)*m], x[i*m:(i+1)*m])
	}
}

type blas64General = blas64.General

type denseSetter interface {
	Dims() (int, int)
	Set(i, j int, v float64)
}
