package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomModel builds a model with widths[0] = Q(0), widths[L] = D(L), the
// given kernels per layer ("rbf" or "linear") and m inducing points per
// layer, with random but well-conditioned parameters.
func randomModel(rng *rand.Rand, n int, widths []int, kernels []string, m int) *Model {
	x := mat.NewDense(n, widths[0], nil)
	for i := 0; i < n; i++ {
		for j := 0; j < widths[0]; j++ {
			x.Set(i, j, rng.Float64()*2-1)
		}
	}
	y := mat.NewDense(n, widths[len(widths)-1], nil)
	for i := 0; i < n; i++ {
		for j := 0; j < widths[len(widths)-1]; j++ {
			y.Set(i, j, math.Sin(3*x.At(i, 0))+0.1*rng.NormFloat64())
		}
	}
	model := &Model{Jitter: 1e-4, X: x, Y: y}
	for i := 0; i+1 < len(widths); i++ {
		q, d := widths[i], widths[i+1]
		var k Kernel
		switch kernels[i] {
		case "rbf":
			ls := make([]float64, q)
			for j := range ls {
				ls[j] = 0.5 + 0.5*rng.Float64()
			}
			k = NewRBF(0.5+rng.Float64(), ls)
		case "rbfiso":
			k = NewRBFIso(0.5+rng.Float64(), 0.5+0.5*rng.Float64(), q)
		case "linear":
			vs := make([]float64, q)
			for j := range vs {
				vs[j] = 0.5 + rng.Float64()
			}
			k = NewLinear(vs)
		}
		mi := m
		if kernels[i] == "linear" {
			// A linear Kuu has rank Q: more inducing points than that would
			// leave it singular but for the jitter.
			mi = min(m, q)
		}
		m := mi
		z := mat.NewDense(m, q, nil)
		for r := 0; r < m; r++ {
			// Inducing inputs at least 0.5 apart keep Kuu well conditioned,
			// so that finite differences are accurate.
			for try := 0; try < 1000; try++ {
				for c := 0; c < q; c++ {
					z.Set(r, c, rng.Float64()*3-1.5)
				}
				if minDistance(z, r) >= 0.5 {
					break
				}
			}
			for c := 0; c < q; c++ {
				if kernels[i] == "linear" {
					// Near-orthogonal rows keep the rank-Q Kuu well conditioned.
					z.Set(r, c, 0.3*z.At(r, c))
					if r == c {
						z.Set(r, c, z.At(r, c)+1)
					}
				}
			}
		}
		qmu := mat.NewDense(m, d, nil)
		for r := 0; r < m; r++ {
			for c := 0; c < d; c++ {
				qmu.Set(r, c, 0.5*rng.NormFloat64())
			}
		}
		var qs []*mat.Dense
		for range d {
			s := mat.NewDense(m, m, nil)
			for r := 0; r < m; r++ {
				for c := 0; c < r; c++ {
					s.Set(r, c, 0.1*rng.NormFloat64())
				}
				s.Set(r, r, 0.2+0.3*rng.Float64())
			}
			qs = append(qs, s)
		}
		model.Layers = append(model.Layers, &Layer{Kernel: k, NoiseVariance: 0.05 + 0.1*rng.Float64(), InducingInputs: z, QMu: qmu, QSqrt: qs})
	}
	return model
}

func mustEval(t testing.TB, m *Model, opt Options) (*Result, *Gradient) {
	t.Helper()
	r, g, err := Evaluate(m, opt)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	return r, g
}

// minDistance returns the smallest distance from row r of z to rows 0…r−1.
func minDistance(z *mat.Dense, r int) float64 {
	best := math.Inf(1)
	_, q := z.Dims()
	for i := 0; i < r; i++ {
		var d2 float64
		for c := 0; c < q; c++ {
			d := z.At(i, c) - z.At(r, c)
			d2 += d * d
		}
		best = math.Min(best, math.Sqrt(d2))
	}
	return best
}

// TestMatMulSmallMatchesBLAS checks mm against the definition for every
// transpose combination and shapes on both sides of the plain loops'
// threshold and, for the AVX2 kernel (4×8 blocks), every remainder of rows
// mod 4 and columns mod 8.
func TestMatMulSmallMatchesBLAS(t *testing.T) {
	forEachKernelPath(t, testMatMul)
}

func testMatMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	shapes := [][3]int{{1, 1, 1}, {3, 5, 2}, {10, 1, 30}, {7, 9, 11}, {40, 40, 40}, {30, 90, 30}}
	for _, m := range []int{1, 3, 4, 5, 8, 11} {
		for _, n := range []int{1, 6, 8, 9, 16, 23} {
			shapes = append(shapes, [3]int{m, n, 1 + (m*n)%7})
		}
	}
	for _, sh := range shapes {
		m, n, k := sh[0], sh[1], sh[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				a := make([]float64, m*k)
				b := make([]float64, k*n)
				c0 := make([]float64, m*n)
				for i := range a {
					a[i] = rng.NormFloat64()
				}
				for i := range b {
					b[i] = rng.NormFloat64()
				}
				for i := range c0 {
					c0[i] = rng.NormFloat64()
				}
				got := append([]float64(nil), c0...)
				mm(got, m, n, k, a, ta, b, tb, 0.7, 0.3)
				// Independent reference: the definition.
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						var s float64
						for l := 0; l < k; l++ {
							av, bv := a[i*k+l], b[l*n+j]
							if ta {
								av = a[l*m+i]
							}
							if tb {
								bv = b[j*k+l]
							}
							s += av * bv
						}
						want := 0.7*s + 0.3*c0[i*n+j]
						if math.Abs(got[i*n+j]-want) > 1e-12*(1+math.Abs(want)) {
							t.Fatalf("%v ta=%v tb=%v: c[%d][%d] = %v, want %v", sh, ta, tb, i, j, got[i*n+j], want)
						}
					}
				}
			}
		}
	}
}

// TestGemmNNStrides: the AVX2 product with leading dimensions wider than
// the blocks it reads and writes leaves everything outside C's block alone.
func TestGemmNNStrides(t *testing.T) {
	if !haveSIMD {
		t.Skip("engine: this CPU has no AVX2+FMA; gemmNN is only used with it")
	}
	rng := rand.New(rand.NewPCG(8, 9))
	for _, sh := range [][3]int{{5, 11, 3}, {9, 17, 13}, {4, 8, 1}, {2, 3, 40}} {
		m, n, k := sh[0], sh[1], sh[2]
		lda, ldb, ldc := k+3, n+5, n+2
		a := make([]float64, m*lda)
		b := make([]float64, k*ldb)
		c := make([]float64, m*ldc)
		for _, s := range [][]float64{a, b, c} {
			for i := range s {
				s[i] = rng.NormFloat64()
			}
		}
		c0 := append([]float64(nil), c...)
		gemmNN(m, n, k, -1.5, a, lda, b, ldb, c, ldc)
		for i := 0; i < m; i++ {
			for j := 0; j < ldc; j++ {
				want := c0[i*ldc+j]
				if j < n {
					var s float64
					for l := 0; l < k; l++ {
						s += a[i*lda+l] * b[l*ldb+j]
					}
					want += -1.5 * s
				}
				if math.Abs(c[i*ldc+j]-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("%v: c[%d][%d] = %v, want %v", sh, i, j, c[i*ldc+j], want)
				}
			}
		}
	}
}

// TestQuad checks the quadratic forms against the definition.
func TestQuad(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	for _, m := range []int{1, 2, 3, 4, 5, 9, 30} {
		x := make([]float64, m)
		w := make([]float64, m*m)
		for i := range x {
			x[i] = rng.NormFloat64()
			for j := 0; j <= i; j++ {
				v := rng.NormFloat64()
				w[i*m+j], w[j*m+i] = v, v
			}
		}
		var want float64
		for i := range x {
			for j := range x {
				want += x[i] * w[i*m+j] * x[j]
			}
		}
		if got := quad(x, w); math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
			t.Errorf("m=%d: quad %v, want %v", m, got, want)
		}
		// quadRows on three rows: x, 2x and −x.
		rows := append(append(append([]float64(nil), x...), x...), x...)
		for j := range x {
			rows[m+j] *= 2
			rows[2*m+j] *= -1
		}
		got := make([]float64, 3)
		quadRows(got, rows, 3, m, w)
		for i, f := range []float64{1, 4, 1} {
			if math.Abs(got[i]-f*want) > 1e-12*(1+math.Abs(f*want)) {
				t.Errorf("m=%d: quadRows row %d = %v, want %v", m, i, got[i], f*want)
			}
		}
	}
}

// TestCholesky: the factor reproduces A, the inverse times A is the
// identity, and matrices that are not positive definite are refused.
func TestCholesky(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	for _, m := range []int{1, 2, 5, 30, 47} {
		// A = B·Bᵀ + m·I: positive definite, condition number modest.
		b := make([]float64, m*m)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		a := make([]float64, m*m)
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				a[i*m+j] = dot(b[i*m:(i+1)*m], b[j*m:(j+1)*m])
			}
			a[i*m+i] += float64(m)
		}
		l := make([]float64, m*m)
		if !cholesky(l, a, m) {
			t.Fatalf("m=%d: positive definite matrix refused", m)
		}
		inv := make([]float64, m*m)
		cholInverse(inv, l, m)
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
		if got := logAbsDiag(l, m); math.Abs(got-want) > 1e-13*(1+math.Abs(want)) {
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
		if cholesky(make([]float64, 4), a, 2) {
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
	if got := logAbsDiag(d, m); math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Errorf("long diagonal: logAbsDiag %v, Σ log %v", got, want)
	}
}
