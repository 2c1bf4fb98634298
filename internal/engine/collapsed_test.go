package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// collapsedCases are the shapes the optimal final q(u) is checked on: a
// one-layer GP (a certain input, Φ = Ψ1ᵀΨ1), deep GPs of the step and robot
// shapes, linear and isotropic final layers, and an autoencoder.
var collapsedCases = []struct {
	widths  []int
	kernels []string
	m       int
}{
	{[]int{1, 2}, []string{"rbf"}, 4},
	{[]int{1, 1, 1, 1}, []string{"rbf", "rbf", "rbf"}, 5},
	{[]int{1, 3, 3, 4}, []string{"rbf", "rbf", "rbf"}, 5},
	{[]int{1, 2, 2}, []string{"rbf", "linear"}, 2},
	{[]int{2, 2, 1}, []string{"rbf", "rbfiso"}, 4},
	{[]int{4, 2, 4}, []string{"rbfiso", "rbfiso"}, 4},
}

// TestOptimalFinalQGradient checks the envelope theorem: the gradient an
// evaluation with OptimalFinalQ returns is the derivative of the
// collapsed bound — which re-optimises q(u) at every point — for every
// parameter, by fourth-order central differences; and its final-layer q(u)
// entries are zero, since the collapsed bound does not depend on them.
func TestOptimalFinalQGradient(t *testing.T) {
	forEachKernelPath(t, func(t *testing.T) {
		for ci, tc := range collapsedCases {
			t.Run(fmt.Sprint(tc.widths, tc.kernels), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(ci), 11))
				m := RandomModel(rng, 9, tc.widths, tc.kernels, tc.m)
				_, g := mustEval(t, m, Options{Gradient: true, OptimalFinalQ: true})
				analytic := g.Flatten(nil)
				p := m.Params(nil)
				layout := m.ParamLayout()
				last := len(m.Layers) - 1
				for k := range p {
					final := layout[k].Layer == last && (layout[k].Group == GroupQMu || layout[k].Group == GroupQSqrt)
					if final {
						if analytic[k] != 0 {
							t.Errorf("param %d (final layer %v): gradient %g, want 0", k, layout[k].Group, analytic[k])
						}
						continue
					}
					h := 1e-3 * math.Max(1, math.Abs(p[k]))
					f := func(v float64) float64 {
						q := append([]float64(nil), p...)
						q[k] = v
						mm := m.Clone()
						mm.SetParams(q)
						r, _ := mustEval(t, mm, Options{OptimalFinalQ: true})
						return r.Bound
					}
					fd := centralDiff4(f, p[k], h)
					if err := math.Abs(fd-analytic[k]) / math.Max(1, math.Abs(fd)); err > 1e-6 {
						t.Errorf("param %d (layer %d %v): analytic %.10g, finite difference %.10g (rel err %.2g)", k, layout[k].Layer, layout[k].Group, analytic[k], fd, err)
					}
				}
			})
		}
	})
}

// TestOptimalFinalQIsTheOptimum checks the optimum itself: the bound at
// it is the closed-form collapsed bound, computed independently here with
// gonum from the definitions (explicit inverses, Ψ2 datum by datum from
// PsiStats); it is above the bound at the model's own q(u) and at random
// perturbations of the optimum; the uncollapsed gradient w.r.t. the final
// q(u) vanishes there; and evaluating the uncollapsed bound with the
// optimum written into the model gives the same bound and gradient bit for
// bit.
func TestOptimalFinalQIsTheOptimum(t *testing.T) {
	for ci, tc := range collapsedCases {
		t.Run(fmt.Sprint(tc.widths, tc.kernels), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 13))
			m := RandomModel(rng, 11, tc.widths, tc.kernels, tc.m)
			last := len(m.Layers) - 1
			res, g := mustEval(t, m, Options{Gradient: true, OptimalFinalQ: true})

			want := collapsedBoundGonum(t, m)
			if d := math.Abs(res.Bound - want); d > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("bound %.15g, closed-form collapsed bound %.15g (diff %.2g)", res.Bound, want, d)
			}

			own, gOwn := mustEval(t, m, Options{Gradient: true})
			if !(res.Bound >= own.Bound) {
				t.Errorf("bound at the optimum %.12g < at the model's q(u) %.12g", res.Bound, own.Bound)
			}
			opt := m.Clone()
			res.FinalQ.Apply(opt.Layers[last])
			at, gAt := mustEval(t, opt, Options{Gradient: true})
			if at.Bound != res.Bound {
				t.Errorf("uncollapsed bound at the optimum %.17g, collapsed %.17g", at.Bound, res.Bound)
			}
			// The uncollapsed gradient w.r.t. the final q(u) at the
			// optimum, relative to its size at the model's q(u).
			scale := func(gr *Gradient) float64 {
				l := gr.Layers[last]
				v := mat.Norm(l.QMu, math.Inf(1))
				for _, s := range l.QSqrt {
					v = math.Max(v, mat.Norm(s, math.Inf(1)))
				}
				return v
			}
			if r := scale(gAt) / scale(gOwn); r > 1e-9 {
				t.Errorf("final q(u)'s gradient at the optimum is %.2g of its size at the model's q(u)", r)
			}
			// The other parameters' gradient is the uncollapsed one at the
			// optimum.
			ga, gb := g.Flatten(nil), gAt.Flatten(nil)
			for k, info := range opt.ParamLayout() {
				if info.Layer == last && (info.Group == GroupQMu || info.Group == GroupQSqrt) {
					continue
				}
				if ga[k] != gb[k] {
					t.Errorf("param %d (layer %d %v): collapsed gradient %.17g, uncollapsed at the optimum %.17g", k, info.Layer, info.Group, ga[k], gb[k])
				}
			}
			// Perturbed optima are worse.
			for trial := range 5 {
				p := opt.Clone()
				l := p.Layers[last]
				r, c := l.QMu.Dims()
				for i := range r {
					for j := range c {
						l.QMu.Set(i, j, l.QMu.At(i, j)+1e-3*rng.NormFloat64())
					}
					for _, s := range l.QSqrt {
						for j := 0; j <= i; j++ {
							s.Set(i, j, s.At(i, j)*(1+1e-3*rng.NormFloat64()))
						}
					}
				}
				pr, _ := mustEval(t, p, Options{})
				if !(pr.Bound < res.Bound) {
					t.Errorf("perturbation %d: bound %.15g, not below the optimum's %.15g", trial, pr.Bound, res.Bound)
				}
			}
		})
	}
}

// collapsedBoundGonum is the collapsed bound from its definition: the
// layers below the last and the last layer's compression as the engine
// computes them (they do not involve its q(u)), and
//
//	−ND/2·log(2πs²) − Σ_d y_dᵀy_d/(2s²) + Σ_d y_dᵀΨ1 A⁻¹ Ψ1ᵀ y_d/(2s⁴)
//	− D/2·(log|A| − log|K|),  A = K + Φ/s²,
//
// with Φ = Σ_n Ψ2_n from PsiStats at the last layer's input message.
func collapsedBoundGonum(t *testing.T, m *Model) float64 {
	res, _ := mustEval(t, m, Options{OutputVariance: true})
	last := len(m.Layers) - 1
	l := m.Layers[last]
	mz, q, d := l.Dims()
	n, _ := m.Y.Dims()
	bound := -res.Layers[last].Compression
	for i := range last {
		bound -= res.Layers[i].KL + res.Layers[i].Compression + res.Layers[i].Propagation
	}
	z := make([]float64, 0, mz*q)
	for i := range mz {
		z = append(z, l.InducingInputs.RawRowView(i)...)
	}
	psi1 := mat.NewDense(n, mz, nil)
	phi := mat.NewSymDense(mz, nil)
	p2 := make([]float64, mz*mz)
	for i := range n {
		var mu, s []float64
		if last == 0 {
			mu = m.X.RawRowView(i)
		} else {
			in := res.Messages[last-1]
			mu, s = in.Mean.RawRowView(i), in.Var.RawRowView(i)
		}
		PsiStats(l.Kernel, z, mu, s, psi1.RawRowView(i), p2)
		for a := range mz {
			for b := a; b < mz; b++ {
				phi.SetSym(a, b, phi.At(a, b)+p2[a*mz+b])
			}
		}
	}
	s2 := l.NoiseVariance
	k := mat.NewSymDense(mz, nil)
	a := mat.NewSymDense(mz, nil)
	for i := range mz {
		for j := i; j < mz; j++ {
			v := l.Kernel.Eval(z[i*q:(i+1)*q], z[j*q:(j+1)*q])
			if i == j {
				v += m.Jitter
			}
			k.SetSym(i, j, v)
			a.SetSym(i, j, v+phi.At(i, j)/s2)
		}
	}
	var ck, ca mat.Cholesky
	if !ck.Factorize(k) || !ca.Factorize(a) {
		t.Fatal("K or K + Φ/s² not positive definite")
	}
	var py, apy mat.Dense
	py.Mul(psi1.T(), m.Y)
	if err := ca.SolveTo(&apy, &py); err != nil {
		t.Fatal(err)
	}
	var yy, quad float64
	for i := range n {
		for j := range d {
			yy += m.Y.At(i, j) * m.Y.At(i, j)
		}
	}
	for i := range mz {
		for j := range d {
			quad += py.At(i, j) * apy.At(i, j)
		}
	}
	bound += -0.5*float64(n*d)*math.Log(2*math.Pi*s2) - yy/(2*s2) + quad/(2*s2*s2) - 0.5*float64(d)*(ca.LogDet()-ck.LogDet())
	return bound
}

// TestOptimalFinalQExactGP: a one-layer model with Z = X and its q(u) at
// the optimum is the exact GP, whatever q(u) the model holds: the bound is
// the exact log marginal likelihood (TestExactGPLimit computes it with the
// optimal q(u) written by hand).
func TestOptimalFinalQExactGP(t *testing.T) {
	n := 7
	x := mat.NewDense(n, 1, nil)
	y := mat.NewDense(n, 2, nil)
	for i := range n {
		x.Set(i, 0, float64(i)/float64(n)*2-1)
		y.Set(i, 0, math.Sin(3*x.At(i, 0)))
		y.Set(i, 1, math.Cos(2*x.At(i, 0))-0.5)
	}
	kern := NewRBF(1.3, []float64{0.4})
	noise := 0.05
	k := mat.NewSymDense(n, nil)
	for i := range n {
		for j := range n {
			k.SetSym(i, j, kern.Eval(x.RawRowView(i), x.RawRowView(j)))
		}
	}
	want, _ := exactGP(t, k, y, noise)
	// Any q(u): the prior.
	qs := func() *mat.Dense {
		s := mat.NewDense(n, n, nil)
		for i := range n {
			s.Set(i, i, 1)
		}
		return s
	}
	m := &Model{Jitter: 0, X: x, Y: y, Layers: []*Layer{{
		Kernel: kern, NoiseVariance: noise, InducingInputs: mat.DenseCopyOf(x),
		QMu: mat.NewDense(n, 2, nil), QSqrt: []*mat.Dense{qs(), qs()},
	}}}
	res, _ := mustEval(t, m, Options{OptimalFinalQ: true})
	if d := math.Abs(res.Bound - want); d > 1e-6 {
		t.Errorf("bound %.12g, exact log marginal likelihood %.12g (diff %.3g)", res.Bound, want, d)
	}
}

// TestOptimalFinalQRefusesMinibatch: the optimum needs every datum's Ψ
// statistics.
func TestOptimalFinalQRefusesMinibatch(t *testing.T) {
	m := RandomModel(rand.New(rand.NewPCG(1, 2)), 9, []int{1, 1, 1}, []string{"rbf", "rbf"}, 4)
	if _, _, err := Evaluate(m, Options{OptimalFinalQ: true, Rows: []int{0, 1, 2}}); err == nil {
		t.Error("a minibatch with OptimalFinalQ gave no error")
	}
}
