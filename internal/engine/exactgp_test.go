package engine

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestExactGPLimit: a one-layer model with Z = X and the optimal q(u) —
// the exact posterior of f at X — must give the exact GP log marginal
// likelihood log N(y | 0, K + σ²I), computed independently here.
func TestExactGPLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kernel Kernel
		noise  float64
	}{
		{"rbf", NewRBF(1.3, []float64{0.3}), 0.05},
		{"rbf-2d", NewRBF(0.7, []float64{0.4, 0.9}), 0.2},
		{"linear", NewLinear([]float64{0.8, 1.7}), 0.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.kernel.InputDim()
			n := 8
			if tc.kernel.Name() == "linear" {
				// The linear kernel's K has rank Q; Z = X needs K invertible.
				n = q
			}
			x := mat.NewDense(n, q, nil)
			y := mat.NewDense(n, 2, nil)
			for i := 0; i < n; i++ {
				for j := 0; j < q; j++ {
					x.Set(i, j, float64(i)/float64(n)*2-1+0.37*float64(j*i%3))
				}
				y.Set(i, 0, math.Sin(3*x.At(i, 0)))
				y.Set(i, 1, math.Cos(2*x.At(i, 0))-0.5)
			}
			k := mat.NewSymDense(n, nil)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					k.SetSym(i, j, tc.kernel.Eval(x.RawRowView(i), x.RawRowView(j)))
				}
			}
			want, chol := exactGP(t, k, y, tc.noise)
			// Optimal q(u): m = K (K+σ²I)⁻¹ y, S = K − K (K+σ²I)⁻¹ K.
			var kinvy mat.Dense
			if err := chol.SolveTo(&kinvy, y); err != nil {
				t.Fatal(err)
			}
			var qmu mat.Dense
			qmu.Mul(k, &kinvy)
			var kk mat.Dense
			if err := chol.SolveTo(&kk, k); err != nil {
				t.Fatal(err)
			}
			s := mat.NewSymDense(n, nil)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					var v float64
					for r := 0; r < n; r++ {
						v += k.At(i, r) * kk.At(r, j)
					}
					s.SetSym(i, j, k.At(i, j)-v)
				}
			}
			var sc mat.Cholesky
			if !sc.Factorize(s) {
				t.Fatal("posterior covariance not positive definite")
			}
			var l mat.TriDense
			sc.LTo(&l)
			ld := mat.DenseCopyOf(&l)
			m := &Model{Jitter: 0, X: x, Y: y, Layers: []*Layer{{
				Kernel: tc.kernel, NoiseVariance: tc.noise,
				InducingInputs: mat.DenseCopyOf(x), QMu: &qmu, QSqrt: []*mat.Dense{ld, mat.DenseCopyOf(ld)},
			}}}
			res, _ := mustEval(t, m, Options{})
			if d := math.Abs(res.Bound - want); d > 1e-6 {
				t.Errorf("bound %.12g, exact log marginal likelihood %.12g (diff %.3g)", res.Bound, want, d)
			}
			if c := res.Layers[0].Compression; math.Abs(c) > 1e-8 {
				t.Errorf("compression %.3g, want 0 with Z = X", c)
			}
		})
	}
}

// exactGP returns the exact log marginal likelihood of y's columns, each
// an independent GP with covariance k + noise·I, and the Cholesky
// factorisation of k + noise·I.
func exactGP(t *testing.T, k *mat.SymDense, y *mat.Dense, noise float64) (float64, *mat.Cholesky) {
	t.Helper()
	n, dims := y.Dims()
	ky := mat.NewSymDense(n, nil)
	ky.AddSym(k, eye(n, noise))
	chol := new(mat.Cholesky)
	if !chol.Factorize(ky) {
		t.Fatal("K + σ²I not positive definite")
	}
	var ll float64
	for d := 0; d < dims; d++ {
		yd := mat.VecDense{}
		yd.CloneFromVec(y.ColView(d))
		var alpha mat.VecDense
		if err := chol.SolveVecTo(&alpha, &yd); err != nil {
			t.Fatal(err)
		}
		ll += -0.5*mat.Dot(&yd, &alpha) - 0.5*chol.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
	}
	return ll, chol
}

func eye(n int, v float64) *mat.DiagDense {
	d := make([]float64, n)
	for i := range d {
		d[i] = v
	}
	return mat.NewDiagDense(n, d)
}
