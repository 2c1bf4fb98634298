package linalg

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestCholesky: the factor reproduces A, the inverse times A is the
// identity, and matrices that are not positive definite are refused.
func TestCholesky(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	for _, m := range []int{1, 2, 5, 30, 47} {
		a := spd(rng, m)
		l := make([]float64, m*m)
		if !Cholesky(l, a, m) {
			t.Fatalf("m=%d: positive definite matrix refused", m)
		}
		inv := make([]float64, m*m)
		CholInverse(inv, l, m)
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				if j > i && l[i*m+j] != 0 {
					t.Fatalf("m=%d: factor not lower triangular at (%d,%d)", m, i, j)
				}
				var llt, ia float64
				for k := 0; k < m; k++ {
					llt += l[i*m+k] * l[j*m+k]
					ia += inv[i*m+k] * a[k*m+j]
				}
				if math.Abs(llt-a[i*m+j]) > 1e-12*float64(m)*(1+math.Abs(a[i*m+j])) {
					t.Fatalf("m=%d: (L·Lᵀ)[%d][%d] = %v, want %v", m, i, j, llt, a[i*m+j])
				}
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(ia-want) > 1e-12*float64(m) {
					t.Fatalf("m=%d: (A⁻¹·A)[%d][%d] = %v, want %v", m, i, j, ia, want)
				}
				if inv[i*m+j] != inv[j*m+i] {
					t.Fatalf("m=%d: inverse not symmetric at (%d,%d)", m, i, j)
				}
			}
		}
		// Σ log L_jj as one log of a product.
		var want float64
		for j := 0; j < m; j++ {
			want += math.Log(l[j*m+j])
		}
		if got := LogAbsDiag(l, m); math.Abs(got-want) > 1e-13*(1+math.Abs(want)) {
			t.Errorf("m=%d: logAbsDiag %v, Σ log %v", m, got, want)
		}
	}
	// Not positive definite: an indefinite matrix, a singular one, NaN.
	for _, a := range [][]float64{
		{1, 2, 2, 1},
		{1, 1, 1, 1},
		{math.NaN(), 0, 0, 1},
		{1, 0, 0, math.Inf(1)},
	} {
		if Cholesky(make([]float64, 4), a, 2) {
			t.Errorf("%v: accepted as positive definite", a)
		}
	}
	// logAbsDiag over a long diagonal of tiny and huge entries, where a
	// plain product would underflow or overflow.
	m := 200
	d := make([]float64, m*m)
	var want float64
	for j := 0; j < m; j++ {
		d[j*m+j] = math.Pow(10, float64(j%7)*40-120) * (1 + rng.Float64())
		want += math.Log(d[j*m+j])
	}
	if got := LogAbsDiag(d, m); math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Errorf("long diagonal: logAbsDiag %v, Σ log %v", got, want)
	}
}

// spd returns B·Bᵀ + m·I for a random B: positive definite, condition
// number modest.
func spd(rng *rand.Rand, m int) []float64 {
	b := make([]float64, m*m)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	a := make([]float64, m*m)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			a[i*m+j] = Dot(b[i*m:(i+1)*m], b[j*m:(j+1)*m])
		}
		a[i*m+i] += float64(m)
	}
	return a
}

// TestCholeskyAgreesWithGonum: an independent implementation (gonum's
// LAPACK-style factorisation) gives the same factor; in place gives the
// same factor bit for bit; a factor continued from its own leading rows is
// the factor bit for bit.
func TestCholeskyAgreesWithGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range []int{1, 3, 8, 33} {
		a := spd(rng, m)
		l := make([]float64, m*m)
		if !Cholesky(l, a, m) {
			t.Fatalf("m=%d: refused", m)
		}
		var g mat.Cholesky
		if !g.Factorize(mat.NewSymDense(m, slices.Clone(a))) {
			t.Fatalf("m=%d: gonum refused", m)
		}
		var gl mat.TriDense
		g.LTo(&gl)
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				// 1e-13 relative to the diagonal: two summation orders of
				// the same m products on a well-conditioned matrix.
				if d := math.Abs(l[i*m+j] - gl.At(i, j)); d > 1e-13*math.Sqrt(a[i*m+i])*float64(m) {
					t.Fatalf("m=%d: L[%d][%d] = %v, gonum %v", m, i, j, l[i*m+j], gl.At(i, j))
				}
			}
		}
		in := slices.Clone(a)
		if !Cholesky(in, in, m) || !slices.Equal(in, l) {
			t.Fatalf("m=%d: in-place factor differs", m)
		}
		for p := 0; p <= m; p++ {
			c := make([]float64, m*m)
			copy(c, l[:p*m])
			if !CholeskyFrom(c, a, m, p) || !slices.Equal(c, l) {
				t.Fatalf("m=%d: factor continued from row %d differs", m, p)
			}
		}
	}
}

// TestSolves: L⁻¹x, L⁻ᵀx and (L·Lᵀ)⁻¹x checked by multiplying back.
func TestSolves(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, m := range []int{1, 4, 21} {
		a := spd(rng, m)
		l := make([]float64, m*m)
		if !Cholesky(l, a, m) {
			t.Fatalf("m=%d: refused", m)
		}
		x := make([]float64, m)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		check := func(name string, got []float64, mul func(v []float64) []float64) {
			t.Helper()
			back := mul(got)
			for i := range x {
				if math.Abs(back[i]-x[i]) > 1e-12*float64(m)*(1+math.Abs(x[i])) {
					t.Fatalf("m=%d %s: row %d gives %v, want %v", m, name, i, back[i], x[i])
				}
			}
		}
		lMul := func(v []float64) []float64 { // L·v
			r := make([]float64, m)
			for i := 0; i < m; i++ {
				r[i] = Dot(l[i*m:i*m+i+1], v[:i+1])
			}
			return r
		}
		ltMul := func(v []float64) []float64 { // Lᵀ·v
			r := make([]float64, m)
			for i := 0; i < m; i++ {
				for k := i; k < m; k++ {
					r[i] += l[k*m+i] * v[k]
				}
			}
			return r
		}
		aMul := func(v []float64) []float64 {
			r := make([]float64, m)
			for i := 0; i < m; i++ {
				r[i] = Dot(a[i*m:(i+1)*m], v)
			}
			return r
		}
		f := slices.Clone(x)
		ForwardSolve(l, m, f)
		check("ForwardSolve", f, lMul)
		b := slices.Clone(x)
		BackSolveT(l, m, b)
		check("BackSolveT", b, ltMul)
		s := slices.Clone(x)
		CholSolve(l, m, s)
		check("CholSolve", s, aMul)
	}
}

// TestPrincipalScoresGram: the covariance's eigenvectors give the SVD's
// scores, signs and rank, on full-rank and rank-deficient data.
func TestPrincipalScoresGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 1))
	const n, dy = 3000, 6
	for _, rank := range []int{dy, 2} {
		y := make([]float64, n*dy)
		for r := 0; r < n; r++ {
			f := make([]float64, rank)
			for k := range f {
				f[k] = rng.NormFloat64() * float64(rank-k) // distinct variances
			}
			for j := 0; j < dy; j++ {
				y[r*dy+j] = 3 // an offset the centring removes
				for k, v := range f {
					y[r*dy+j] += v * math.Cos(float64((j+1)*(k+2)))
				}
			}
		}
		for _, d := range []int{1, 3} {
			want, wk := principalScoresSVD(y, n, dy, d)
			got, gk := principalScoresGram(y, n, dy, d)
			if wk != gk {
				t.Fatalf("rank %d, %d components: %d real by the covariance, %d by the SVD", rank, d, gk, wk)
			}
			var scale float64
			for _, v := range want {
				scale = max(scale, math.Abs(v))
			}
			for i := range want {
				if math.Abs(want[i]-got[i]) > 1e-9*scale {
					t.Fatalf("rank %d, %d components: score %d is %v by the covariance, %v by the SVD", rank, d, i, got[i], want[i])
				}
			}
		}
	}
}
