package stream

import (
	"math"

	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// lightForward propagates the model's training inputs through its first
// `layers` layers and returns their output messages — the same messages as
// engine.Evaluator.Predict (TestLightForwardMatchesPredict), without the
// per-datum Ψ₂ statistics that Predict computes for the penalties: with
// ψ₁ₙ = E[k(hₙ, Z)], mean = ψ₁ₙA_d and var = s² + ‖L_dᵀKuu⁻¹ψ₁ₙᵀ‖².
// It returns ok false for kernels other than RBF (callers then use
// Predict).
type lightForward struct {
	psi1, v, inv []float64
	out          []engine.Message
}

func (lf *lightForward) run(m *engine.Model, layers int) ([]engine.Message, bool) {
	n, _ := m.X.Dims()
	in := denseData(m.X)
	var inVar []float64
	lf.out = lf.out[:0]
	for i := 0; i < layers && i < len(m.Layers); i++ {
		l := m.Layers[i]
		k, ok := l.Kernel.(*engine.RBF)
		if !ok {
			return nil, false
		}
		p, err := engine.NewLayerPosterior(l, m.Jitter)
		if err != nil {
			return nil, false
		}
		mz, q, d := l.Dims()
		z := denseData(l.InducingInputs)
		kinv := p.KInv.RawSymmetric()
		at := func(r, c int) float64 {
			if r > c {
				r, c = c, r
			}
			return kinv.Data[r*kinv.Stride+c]
		}
		A := p.A.RawMatrix()
		lf.psi1 = grow(lf.psi1, mz)
		lf.v = grow(lf.v, mz)
		mean := mat.NewDense(n, d, nil)
		vr := mat.NewDense(n, d, nil)
		md, vd := mean.RawMatrix().Data, vr.RawMatrix().Data
		lf.inv = grow(lf.inv, q)
		inv := lf.inv
		for r := 0; r < n; r++ {
			mu := in[r*q : (r+1)*q]
			pre := k.Variance
			for j, ls := range k.Lengthscales {
				l2 := ls * ls
				if inVar == nil {
					inv[j] = 0.5 / l2
					continue
				}
				s := math.Max(inVar[r*q+j], 0)
				inv[j] = 0.5 / (l2 + s)
				pre /= math.Sqrt(1 + s/l2)
			}
			for c := range mz {
				zc := z[c*q : (c+1)*q]
				var e float64
				for j := range q {
					dd := mu[j] - zc[j]
					e += dd * dd * inv[j]
				}
				lf.psi1[c] = pre * math.Exp(-e)
			}
			for c := range mz { // v = Kuu⁻¹ ψ₁ᵀ
				var s float64
				for c2 := range mz {
					s += at(c, c2) * lf.psi1[c2]
				}
				lf.v[c] = s
			}
			for dd := range d {
				var s float64
				for c := range mz {
					s += lf.psi1[c] * A.Data[c*A.Stride+dd]
				}
				md[r*d+dd] = s
				L := l.QSqrt[dd].RawMatrix()
				var ss float64
				for c := range mz { // (Lᵀv)_c = Σ_{r ≥ c} L_rc v_r
					var t float64
					for r2 := c; r2 < mz; r2++ {
						t += L.Data[r2*L.Stride+c] * lf.v[r2]
					}
					ss += t * t
				}
				vd[r*d+dd] = l.NoiseVariance + ss
			}
		}
		lf.out = append(lf.out, engine.Message{Mean: mean, Var: vr})
		in, inVar = md, vd
	}
	return lf.out, true
}
