package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRBFIsoMatchesARD checks the isotropic RBF against the ARD RBF with
// all lengthscales equal: the same bound and, for the lengthscale, the sum
// of the ARD lengthscale gradients (the derivative of a tied parameter).
func TestRBFIsoMatchesARD(t *testing.T) {
	for ci, widths := range [][]int{{5, 2}, {6, 2, 6}, {2, 3, 1}} {
		rng := rand.New(rand.NewPCG(uint64(ci), 11))
		kernels := make([]string, len(widths)-1)
		for i := range kernels {
			kernels[i] = "rbfiso"
		}
		iso := RandomModel(rng, 12, widths, kernels, 4)
		ard := iso.Clone()
		for _, l := range ard.Layers {
			l.Kernel = l.Kernel.(*RBFIso).ARD()
		}
		ri, gi := mustEval(t, iso, Options{Gradient: true})
		ra, ga := mustEval(t, ard, Options{Gradient: true})
		if math.Abs(ri.Bound-ra.Bound) > 1e-10*math.Abs(ra.Bound) {
			t.Errorf("%v: bound iso %.15g, ARD %.15g", widths, ri.Bound, ra.Bound)
		}
		for li := range iso.Layers {
			ki, ka := gi.Layers[li].Kernel, ga.Layers[li].Kernel
			var sum float64
			for _, v := range ka[1:] {
				sum += v
			}
			if d := math.Abs(ki[0] - ka[0]); d > 1e-8*math.Max(1, math.Abs(ka[0])) {
				t.Errorf("%v layer %d: variance gradient iso %.12g, ARD %.12g", widths, li, ki[0], ka[0])
			}
			if d := math.Abs(ki[1] - sum); d > 1e-8*math.Max(1, math.Abs(sum)) {
				t.Errorf("%v layer %d: lengthscale gradient iso %.12g, Σ ARD %.12g", widths, li, ki[1], sum)
			}
		}
	}
}

func TestRBFIsoEvalAndParams(t *testing.T) {
	k := NewRBFIso(1.3, 0.7, 3)
	a, b := []float64{0.1, -0.4, 2}, []float64{0.5, 0.2, 1.1}
	// k(a,b) = 1.3·exp(−½·(0.16+0.36+0.81)/0.49), by hand.
	want := 1.3 * math.Exp(-0.5*1.33/0.49)
	if got := k.Eval(a, b); math.Abs(got-want) > 1e-15 {
		t.Errorf("Eval = %.17g, want %.17g", got, want)
	}
	if got := k.ARD().Eval(a, b); math.Abs(got-want) > 1e-15 {
		t.Errorf("ARD().Eval = %.17g, want %.17g", got, want)
	}
	c := k.Clone()
	c.SetParams([]float64{2, 3})
	if k.Variance() != 1.3 || k.Lengthscale() != 0.7 || c.Params()[1] != 3 || c.(*RBFIso).ARD().Lengthscales[2] != 3 {
		t.Errorf("Clone shares state or SetParams missed the tied lengthscales: %v %v", k.Params(), c.Params())
	}
	dst := make([]float64, 1)
	Cov(k, dst, a, b)
	if math.Abs(dst[0]-want) > 1e-15 {
		t.Errorf("Cov = %.17g, want %.17g", dst[0], want)
	}
}

// TestRBFIsoRowsMatchLoop compares the product form of a certain input's
// ψ1 and its gradient (psi1Rows, psi1GradRows) with the loop of
// differences per row (psi1, psi1Grad, psi0Grad) on random normalised
// inputs of Frey's width and smaller ones, and checks that rows far from
// the origin on the lengthscale's scale take the loop.
func TestRBFIsoRowsMatchLoop(t *testing.T) {
	const eps = 0x1p-52
	for ci, c := range []struct {
		r, m, q int
		lscale  float64 // lengthscale / √Q
		offset  float64 // added to every input and inducing input
	}{
		{37, 15, 560, 1, 0},
		{123, 15, 560, 0.3, 0},
		{9, 7, 5, 0.8, 0},
		{33, 50, 64, 0.5, 0.5},
	} {
		rng := rand.New(rand.NewPCG(uint64(ci), 5))
		k := NewRBFIso(0.5+rng.Float64(), c.lscale*math.Sqrt(float64(c.q)), c.q)
		x := make([]float64, c.r*c.q)
		z := make([]float64, c.m*c.q)
		for i := range x {
			x[i] = rng.NormFloat64() + c.offset
		}
		for i := range z {
			z[i] = rng.NormFloat64() + c.offset
		}
		// One inducing input on a datum: a distance of zero.
		copy(z[:c.q], x[c.q:2*c.q])
		var s isoRows
		s.prepare(z, c.m, c.q, c.r, 1)
		psi1 := make([]float64, c.r*c.m)
		if !k.psi1Rows(psi1, s.d2, s.xx, x, c.r, &s) {
			t.Fatalf("case %d: rows within the limit took the loop", ci)
		}
		want := make([]float64, c.r*c.m)
		h := 0.5 / (k.Lengthscale() * k.Lengthscale())
		for i := range c.r {
			k.psi1(want[i*c.m:(i+1)*c.m], x[i*c.q:(i+1)*c.q], nil, z, nil)
			for j := range c.m {
				// The exponent's error bound, 2γ_Q·h·(‖x‖² + ‖z‖²) with
				// γ_Q = Q·ε, against the loop's γ_Q·h·‖x − z‖², plus
				// the exponential's and the variance's rounding.
				tol := (2*float64(c.q)*eps*h*(s.xx[i]+s.zz[j]+s.d2[i*c.m+j]) + 8*eps) * want[i*c.m+j]
				if d := math.Abs(psi1[i*c.m+j] - want[i*c.m+j]); d > tol {
					t.Errorf("case %d: ψ1[%d,%d] = %.17g, loop %.17g (diff %.3g > %.3g)", ci, i, j, psi1[i*c.m+j], want[i*c.m+j], d, tol)
				}
			}
		}
		g := make([]float64, c.r*c.m)
		for i := range g {
			g[i] = rng.NormFloat64()
		}
		const g0 = -0.7
		dZ, dP := make([]float64, c.m*c.q), make([]float64, 2)
		k.psi1GradRows(g, psi1, s.d2, x, c.r, z, g0, make([]float64, c.r*c.m), dZ, dP)
		wZ, wP := make([]float64, c.m*c.q), make([]float64, 2)
		for i := range c.r {
			k.psi1Grad(g[i*c.m:(i+1)*c.m], want[i*c.m:(i+1)*c.m], x[i*c.q:(i+1)*c.q], nil, z, nil, nil, wZ, wP, nil)
			k.psi0Grad(g0, x[i*c.q:(i+1)*c.q], nil, nil, nil, wP)
		}
		// dZ_m = Σ_n c_nm (x_n − z_m)/ℓ², as Σ_n c_nm x_n − (Σ_n c_nm) z_m:
		// each element is off by about γ_R times the sums of the terms'
		// magnitudes, Σ_n |c_nm|(|x_n| + |z_m|)/ℓ², which the tolerance
		// takes with γ_R = 4R·ε (R rows, and the ψ1 error above).
		il2 := 1 / (k.Lengthscale() * k.Lengthscale())
		for j := range c.m {
			for a := range c.q {
				var mag float64
				for i := range c.r {
					mag += math.Abs(g[i*c.m+j]*want[i*c.m+j]) * (math.Abs(x[i*c.q+a]) + math.Abs(z[j*c.q+a])) * il2
				}
				tol := 4*float64(c.r)*eps*mag + 1e-300
				if d := math.Abs(dZ[j*c.q+a] - wZ[j*c.q+a]); d > tol {
					t.Errorf("case %d: dZ[%d,%d] = %.17g, loop %.17g (diff %.3g > %.3g)", ci, j, a, dZ[j*c.q+a], wZ[j*c.q+a], d, tol)
				}
			}
		}
		// The hyperparameters' gradients are sums over all R·M terms of
		// the ψ1 and distance errors above: 1e-10 relative to the sum of
		// their magnitudes.
		var magV, magL float64
		for i := range c.r {
			for j := range c.m {
				cv := math.Abs(g[i*c.m+j] * want[i*c.m+j])
				magV += cv / k.Variance()
				magL += cv * s.d2[i*c.m+j] * il2 / k.Lengthscale()
			}
		}
		magV += math.Abs(g0) * float64(c.r)
		if d := math.Abs(dP[0] - wP[0]); d > 1e-10*magV {
			t.Errorf("case %d: variance gradient %.17g, loop %.17g", ci, dP[0], wP[0])
		}
		if d := math.Abs(dP[1] - wP[1]); d > 1e-10*magL {
			t.Errorf("case %d: lengthscale gradient %.17g, loop %.17g", ci, dP[1], wP[1])
		}
	}
	// Far from the origin on the lengthscale's scale: the loop.
	k := NewRBFIso(1, 1, 4)
	x := []float64{100, 0, 0, 0}
	var s isoRows
	s.prepare([]float64{99, 0, 0, 0}, 1, 4, 1, 1)
	if k.psi1Rows(make([]float64, 1), s.d2, s.xx, x, 1, &s) {
		t.Errorf("h·(‖x‖² + ‖z‖²) = %g took the product form", 0.5*(1e4+99*99))
	}
}
