package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

func mustEval(t testing.TB, m *Model, opt Options) (*Result, *Gradient) {
	t.Helper()
	r, g, err := Evaluate(m, opt)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	return r, g
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
