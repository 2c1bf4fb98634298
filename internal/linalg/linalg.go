package linalg

import (
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Dot returns Σ a_i b_i with four partial sums, so that the adds do not
// wait on each other. b must be at least as long as a.
func Dot(a, b []float64) float64 {
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

// Cholesky sets l (m×m, row-major) to the lower triangular Cholesky factor
// of the symmetric a, reading a's lower triangle, with zeros above the
// diagonal, and reports false when a is not positive definite (a pivot ≤ 0,
// or not finite). l may be a itself (factorisation in place).
func Cholesky(l, a []float64, m int) bool { return CholeskyFrom(l, a, m, 0) }

// CholeskyFrom is Cholesky with the first p rows of l given (the factor of
// a's leading p×p block): it computes only the rows after them. A factor
// continued this way from an unchanged leading block is bit for bit the
// factor of that block.
func CholeskyFrom(l, a []float64, m, p int) bool {
	l = l[:m*m]
	for j := 0; j < m; j++ {
		lj := l[j*m : j*m+j]
		if j >= p {
			d := a[j*m+j] - Dot(lj, lj)
			if !(d > 0) || math.IsInf(d, 0) {
				return false
			}
			l[j*m+j] = math.Sqrt(d)
			clear(l[j*m+j+1 : (j+1)*m])
		}
		piv := l[j*m+j]
		for i := max(j+1, p); i < m; i++ {
			l[i*m+j] = (a[i*m+j] - Dot(l[i*m:i*m+j], lj)) / piv
		}
	}
	return true
}

// scratch recycles CholInverse's m×m work buffers across goroutines.
var scratch = sync.Pool{New: func() any { return new([]float64) }}

// CholInverse sets inv (m×m) to (L·Lᵀ)⁻¹ = L⁻ᵀ·L⁻¹ for a lower triangular
// Cholesky factor l, exactly symmetric.
func CholInverse(inv, l []float64, m int) {
	buf := scratch.Get().(*[]float64)
	defer scratch.Put(buf)
	if cap(*buf) < m*m {
		*buf = make([]float64, m*m)
	}
	wt := (*buf)[:m*m]
	LowerInverseT(wt, l, m)
	InverseFromT(inv, wt, m)
}

// LowerInverseT sets wt (m×m) to (L⁻¹)ᵀ for a lower triangular l: column
// by column of L⁻¹ by forward substitution, each stored as a row of wt
// (upper triangular, zeros below the diagonal) so that the loops run
// along rows.
func LowerInverseT(wt, l []float64, m int) {
	wt = wt[:m*m]
	clear(wt)
	for c := 0; c < m; c++ {
		col := wt[c*m : (c+1)*m]
		col[c] = 1 / l[c*m+c]
		for i := c + 1; i < m; i++ {
			col[i] = -Dot(l[i*m+c:i*m+i], col[c:i]) / l[i*m+i]
		}
	}
}

// InverseFromT sets inv (m×m) to L⁻ᵀ·L⁻¹, exactly symmetric, from
// wt = (L⁻¹)ᵀ as LowerInverseT leaves it: CholInverse in two steps, for a
// caller that keeps L⁻¹ too.
func InverseFromT(inv, wt []float64, m int) {
	// inv_ij = Σ_k w_ki w_kj over k ≥ max(i, j).
	for i := 0; i < m; i++ {
		for j := 0; j <= i; j++ {
			s := Dot(wt[i*m+i:(i+1)*m], wt[j*m+i:(j+1)*m])
			inv[i*m+j], inv[j*m+i] = s, s
		}
	}
}

// LogAbsDiag returns Σ_j log|a_jj| for the m×m a: the log of the product
// of the diagonal's mantissas plus the sum of its exponents, one log
// rather than m. For a Cholesky factor L it is ½ log det(L·Lᵀ).
func LogAbsDiag(a []float64, m int) float64 {
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

// ForwardSolve overwrites x with L⁻¹x (L lower triangular, m×m, row-major).
func ForwardSolve(l []float64, m int, x []float64) {
	for i := 0; i < m; i++ {
		x[i] = (x[i] - Dot(l[i*m:i*m+i], x[:i])) / l[i*m+i]
	}
}

// BackSolveT overwrites x with L⁻ᵀx (L lower triangular, m×m, row-major).
func BackSolveT(l []float64, m int, x []float64) {
	for i := m - 1; i >= 0; i-- {
		s := x[i]
		for k := i + 1; k < m; k++ {
			s -= l[k*m+i] * x[k]
		}
		x[i] = s / l[i*m+i]
	}
}

// CholSolve overwrites x with (L·Lᵀ)⁻¹x for a lower triangular Cholesky
// factor l.
func CholSolve(l []float64, m int, x []float64) {
	ForwardSolve(l, m, x)
	BackSolveT(l, m, x)
}

// Flatten copies a into dst row by row (m×n, row-major), reusing dst's
// storage when it is large enough, and returns it.
func Flatten(dst []float64, a mat.Matrix) []float64 {
	r, c := a.Dims()
	dst = Resize(dst, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			dst[i*c+j] = a.At(i, j)
		}
	}
	return dst
}

// Resize returns s with length n, reusing its storage when it can. The
// contents are not cleared.
func Resize(s []float64, n int) []float64 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]float64, n)
}

// Symmetrize sets w to (w + wᵀ)/2.
func Symmetrize(w []float64, m int) {
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			v := 0.5 * (w[i*m+j] + w[j*m+i])
			w[i*m+j], w[j*m+i] = v, v
		}
	}
}

// PrincipalScores projects the n rows of y (n × dy, row-major) onto their
// d leading principal components: the rows centred, times the leading
// right singular vectors, each signed so that its largest loading is
// positive (the scores do not flip between runs). It returns the n × d
// scores and how many components are real: columns from there on (rank
// deficiency, singular values below 1e-12 of the largest) are zero.
//
// Above principalGramAbove rows it takes the components from the dy × dy
// covariance's eigenvectors instead, without a copy of y: the thin SVD's
// n × dy copy and factors were several times the data (a million rows).
// The two agree to rounding (TestPrincipalScoresGram), except where two
// singular values are so close that their directions are not determined:
// there each picks its own (the robot-shaped data of
// docs/measurements.md at 100,000 rows).
func PrincipalScores(y []float64, n, dy, d int) ([]float64, int) {
	if n > principalGramAbove {
		return principalScoresGram(y, n, dy, d)
	}
	return principalScoresSVD(y, n, dy, d)
}

// principalScoresSVD is PrincipalScores from the thin SVD of the centred
// copy of y.
func principalScoresSVD(y []float64, n, dy, d int) ([]float64, int) {
	c := slices.Clone(y)
	for j := 0; j < dy; j++ {
		var s float64
		for r := 0; r < n; r++ {
			s += c[r*dy+j]
		}
		s /= float64(n)
		for r := 0; r < n; r++ {
			c[r*dy+j] -= s
		}
	}
	out := make([]float64, n*d)
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(n, dy, c), mat.SVDThin) {
		return out, 0
	}
	var v mat.Dense
	svd.VTo(&v)
	sv := svd.Values(nil)
	for j := 0; j < d; j++ {
		if j >= len(sv) || sv[j] <= 1e-12*sv[0] {
			return out, j
		}
		sign, big := 1.0, 0.0
		for i := 0; i < dy; i++ {
			if a := math.Abs(v.At(i, j)); a > big {
				big = a
				sign = math.Copysign(1, v.At(i, j))
			}
		}
		for r := 0; r < n; r++ {
			var s float64
			for i := 0; i < dy; i++ {
				s += c[r*dy+i] * v.At(i, j)
			}
			out[r*d+j] = sign * s
		}
	}
	return out, d
}

// principalGramAbove is the number of rows above which PrincipalScores
// works from the covariance: with so many rows the components are well
// determined, and the SVD's copies of the data cost more than it gains in
// accuracy.
const principalGramAbove = 1 << 15

// principalScoresGram is PrincipalScores from the eigenvectors of the
// centred Gram matrix (y − ȳ)ᵀ(y − ȳ), whose eigenvalues are the squared
// singular values. The eigenvalues' rounding is ~ε of the largest, so a
// component is real when its singular value exceeds 1e-6 of the largest
// (its eigenvalue 1e-12), not 1e-12 as from the SVD.
func principalScoresGram(y []float64, n, dy, d int) ([]float64, int) {
	mean := make([]float64, dy)
	for r := 0; r < n; r++ {
		for j, v := range y[r*dy : (r+1)*dy] {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	g := mat.NewSymDense(dy, nil)
	raw := g.RawSymmetric()
	row := make([]float64, dy)
	for r := 0; r < n; r++ {
		for j, v := range y[r*dy : (r+1)*dy] {
			row[j] = v - mean[j]
		}
		for i, a := range row {
			gi := raw.Data[i*raw.Stride:]
			for j := i; j < dy; j++ {
				gi[j] += a * row[j]
			}
		}
	}
	out := make([]float64, n*d)
	var eig mat.EigenSym
	if !eig.Factorize(g, true) {
		return out, 0
	}
	var v mat.Dense
	eig.VectorsTo(&v)
	ev := eig.Values(nil) // ascending
	col := func(j int) int { return dy - 1 - j }
	for j := 0; j < d; j++ {
		if j >= dy || !(ev[col(j)] > 1e-12*ev[col(0)]) {
			return out, j
		}
		k := col(j)
		sign, big := 1.0, 0.0
		for i := 0; i < dy; i++ {
			if a := math.Abs(v.At(i, k)); a > big {
				big = a
				sign = math.Copysign(1, v.At(i, k))
			}
		}
		for r := 0; r < n; r++ {
			var s float64
			for i, a := range y[r*dy : (r+1)*dy] {
				s += (a - mean[i]) * v.At(i, k)
			}
			out[r*d+j] = sign * s
		}
	}
	return out, d
}

// Rows returns the rows of a at idx, in idx's order, as a new matrix: nil
// when a is nil, idx is empty or a has no columns (a matrix of no rows or
// columns cannot be made).
func Rows(a *mat.Dense, idx []int) *mat.Dense {
	if a == nil {
		return nil
	}
	_, c := a.Dims()
	if len(idx) == 0 || c == 0 {
		return nil
	}
	out := mat.NewDense(len(idx), c, nil)
	for k, i := range idx {
		out.SetRow(k, a.RawRowView(i))
	}
	return out
}
