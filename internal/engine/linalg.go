package engine

import (
	"math"
	"sync"

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
		crow[j] += alpha * dot(x, b[j*k:(j+1)*k])
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
		t += xi * (w[i*m+i]*xi + 2*dot(x[i+1:], w[i*m+i+1:(i+1)*m]))
	}
	return t
}

// cholesky sets l (m×m, row-major) to the lower triangular Cholesky
// factor of the symmetric a, reading a's lower triangle, and reports false
// when a is not positive definite (a pivot ≤ 0, or not finite). For the
// small matrices here, plain loops beat LAPACK's blocking, and gonum's
// factorisation also estimates a condition number that is not needed.
func cholesky(l, a []float64, m int) bool { return choleskyFrom(l, a, m, 0) }

// choleskyFrom is cholesky with the first p rows of l given (the factor of
// a's leading p×p block): it computes only the rows after them.
func choleskyFrom(l, a []float64, m, p int) bool {
	l = l[:m*m]
	for j := 0; j < m; j++ {
		lj := l[j*m : j*m+j]
		if j >= p {
			d := a[j*m+j] - dot(lj, lj)
			if !(d > 0) || math.IsInf(d, 0) {
				return false
			}
			l[j*m+j] = math.Sqrt(d)
			clear(l[j*m+j+1 : (j+1)*m])
		}
		piv := l[j*m+j]
		for i := max(j+1, p); i < m; i++ {
			l[i*m+j] = (a[i*m+j] - dot(l[i*m:i*m+j], lj)) / piv
		}
	}
	return true
}

// cholInverse sets inv (m×m) to (L·Lᵀ)⁻¹ = L⁻ᵀ·L⁻¹ for a lower triangular
// Cholesky factor l, exactly symmetric.
func cholInverse(inv, l []float64, m int) {
	// w = L⁻¹, column by column by forward substitution, stored
	// transposed (row c of wt is column c of L⁻¹) so that both loops
	// below run along rows.
	buf := getScratch(m * m)
	defer putScratch(buf)
	wt := *buf
	clear(wt)
	for c := 0; c < m; c++ {
		col := wt[c*m : (c+1)*m]
		col[c] = 1 / l[c*m+c]
		for i := c + 1; i < m; i++ {
			col[i] = -dot(l[i*m+c:i*m+i], col[c:i]) / l[i*m+i]
		}
	}
	// inv_ij = Σ_k w_ki w_kj over k ≥ max(i, j).
	for i := 0; i < m; i++ {
		for j := 0; j <= i; j++ {
			s := dot(wt[i*m+i:(i+1)*m], wt[j*m+i:(j+1)*m])
			inv[i*m+j], inv[j*m+i] = s, s
		}
	}
}

// logAbsDiag returns Σ_j log|a_jj| for the m×m a: the log of the product
// of the diagonal's mantissas plus the sum of its exponents, one log
// rather than m.
func logAbsDiag(a []float64, m int) float64 {
	p, e := 1.0, 0
	for j := 0; j < m; j++ {
		f, x := math.Frexp(math.Abs(a[j*m+j]))
		p *= f
		e += x
		if j%32 == 31 {
			// p ≥ 2⁻³² so far: renormalise before it could underflow.
			f, x = math.Frexp(p)
			p, e = f, e+x
		}
	}
	return math.Log(p) + float64(e)*math.Ln2
}

// quadRows sets dst[i] = x_i W x_iᵀ for the r rows x_i of x (r×m) and an
// m×m W: one product X·W, then a dot product per row.
func quadRows(dst, x []float64, r, m int, w []float64) {
	buf := getScratch(r * m)
	defer putScratch(buf)
	t := *buf
	mm(t, r, m, m, x, false, w, false, 1, 0)
	for i := range r {
		dst[i] = dot(t[i*m:(i+1)*m], x[i*m:(i+1)*m])
	}
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

// dot returns Σ a_i b_i with four partial sums, so that the adds do not
// wait on each other.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

type blas64General = blas64.General

type denseSetter interface {
	Dims() (int, int)
	Set(i, j int, v float64)
}
