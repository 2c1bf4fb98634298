package train

import (
	"math"

	"dgpviz/internal/engine"
	"dgpviz/internal/linalg"
)

// Natural-gradient steps for the hidden layers' q(u) (Salimbeni,
// Eleftheriadis & Hensman, 2018), in the trainer's whitened coordinates:
// q(v_d) = N(μ, Σ), Σ = W·Wᵀ, prior N(0, I). With the bound's gradient
// g_μ and Σ̄ = ∂bound/∂Σ (from the gradient w.r.t. W, as for a Cholesky
// factor: Σ̄ = W⁻ᵀ·sym(Φ(Wᵀ·W̄))·W⁻¹, Murray 2016), a step of size γ in
// the natural parameters (Σ⁻¹μ, −½Σ⁻¹) along the gradient w.r.t. the
// expectation parameters (μ, Σ + μμᵀ) is
//
//	Σ'⁻¹ = Σ⁻¹ − 2γ·Σ̄,  Σ'⁻¹μ' = Σ⁻¹μ + γ·(g_μ − 2·Σ̄·μ),
//
// which for γ = 1 and a bound quadratic in u (a conjugate layer) is the
// optimum in one step.
//
// With L-BFGS the step is part of the iteration (TrainerConfig.NaturalGradient):
// the search direction's entries for the hidden q(u) are the step of size
// 1 (in the optimizer's coordinates, with the logarithms of W's diagonal),
// the others L-BFGS's, and the line search scales both. L-BFGS's memory
// leaves the q(u) entries out. A separate step before each L-BFGS step,
// with a line search of its own, measured slower: one more evaluation per
// iteration for a similar gain (docs/measurements.md).

// natStep computes the natural-gradient step of size gamma for one q(v):
// mu (M) and w (M×M lower triangular, positive diagonal) with the bound's
// gradients gmu and gw (lower triangular), into mu2 and w2. It reports
// false when the new precision is not positive definite (gamma too
// large). scr is 4·M² scratch.
func natStep(m int, mu, w, gmu, gw []float64, gamma float64, mu2, w2, scr []float64) bool {
	mm2 := m * m
	a, b, c, d := scr[:mm2], scr[mm2:2*mm2], scr[2*mm2:3*mm2], scr[3*mm2:4*mm2]
	// a = (W⁻¹)ᵀ, so that W⁻ᵀ·X = a·X and X·W⁻¹ = X·aᵀ.
	linalg.LowerInverseT(a, w, m)
	// b = Φ(Wᵀ·W̄): lower triangle, diagonal halved.
	for r := 0; r < m; r++ {
		for col := 0; col < m; col++ {
			if col > r {
				b[r*m+col] = 0
				continue
			}
			var s float64
			for k := r; k < m; k++ { // (Wᵀ)_rk = W_kr, zero for k < r
				s += w[k*m+r] * gw[k*m+col]
			}
			if col == r {
				s *= 0.5
			}
			b[r*m+col] = s
		}
	}
	// sym(b), then Σ̄ = a·sym(b)·aᵀ into d.
	linalg.Symmetrize(b, m)
	mulInto(c, a, b, m, false)
	mulInto(d, c, a, m, true)
	linalg.Symmetrize(d, m)
	// P = Σ⁻¹ = W⁻ᵀW⁻¹ = a·aᵀ; P' = P − 2γΣ̄ into b; h = P·μ + γ(g_μ − 2Σ̄μ) into mu2.
	mulInto(b, a, a, m, true)
	for r := 0; r < m; r++ {
		var pm, sm float64
		for k := 0; k < m; k++ {
			pm += b[r*m+k] * mu[k]
			sm += d[r*m+k] * mu[k]
		}
		mu2[r] = pm + gamma*(gmu[r]-2*sm)
	}
	for i := range b[:mm2] {
		b[i] -= 2 * gamma * d[i]
	}
	// P' = U·Uᵀ with U upper triangular, from the Cholesky factor of the
	// reversed matrix; then Σ' = U⁻ᵀU⁻¹ and W' = U⁻ᵀ (lower).
	for r := 0; r < m; r++ {
		for col := 0; col < m; col++ {
			c[r*m+col] = b[(m-1-r)*m+(m-1-col)]
		}
	}
	if !linalg.Cholesky(c, c, m) {
		return false
	}
	linalg.LowerInverseT(d, c, m) // (L'⁻¹)ᵀ
	for r := 0; r < m; r++ {
		for col := 0; col < m; col++ {
			w2[r*m+col] = 0
			if col <= r {
				w2[r*m+col] = d[(m-1-r)*m+(m-1-col)]
			}
		}
	}
	for r := 0; r < m; r++ {
		if !(w2[r*m+r] > 0) || math.IsInf(w2[r*m+r], 0) {
			return false
		}
	}
	// μ' = Σ'·h = W'·W'ᵀ·h.
	t := c[:m]
	for r := 0; r < m; r++ {
		var s float64
		for k := r; k < m; k++ {
			s += w2[k*m+r] * mu2[k]
		}
		t[r] = s
	}
	for r := 0; r < m; r++ {
		var s float64
		for k := 0; k <= r; k++ {
			s += w2[r*m+k] * t[k]
		}
		mu2[r] = s
	}
	return true
}

// natDirection replaces the hidden q(u)'s entries of the search direction
// d (in the optimizer's coordinates u) by the natural-gradient step of
// size 1 from the current point (its whitened gradient gU).
func (t *Trainer) natDirection(d []float64) {
	if !t.gUOK {
		return // d keeps the scaled gradient
	}
	gamma := make([]float64, len(t.m.Layers))
	for i := range len(gamma) - 1 {
		gamma[i] = 1
	}
	unbounded := make([]float64, len(gamma))
	for i := range unbounded {
		unbounded[i] = math.Inf(1)
	}
	step := make([]float64, len(t.w))
	t.natSteps(t.gU, gamma, unbounded, step)
	for k, i := range t.free {
		if t.isQ[k] {
			d[k] = step[i]
		}
	}
}

// natSteps writes into step, laid out as the optimizer's coordinates w
// (all parameters, with the logarithms of W's diagonal), the
// natural-gradient step of size gamma[i] for the q(u) of every layer i
// with gamma[i] > 0, from the whitened gradient grad at the current point
// t.w; it leaves the other entries alone. Where the new precision of an
// output's q(v) is not positive definite, or an entry of its step exceeds
// maxStep[i] in magnitude (a trust region), it halves that output's size,
// down to no step.
func (t *Trainer) natSteps(grad, gamma, maxStep, step []float64) {
	for i, g := range gamma {
		if !(g > 0) {
			continue
		}
		wl := &t.white[i]
		m, dd := wl.mz, wl.d
		o := wl.offMu()
		mu, gmu, mu2 := make([]float64, m), make([]float64, m), make([]float64, m)
		w, gw, w2 := make([]float64, m*m), make([]float64, m*m), make([]float64, m*m)
		scr := make([]float64, 4*m*m)
		for k := 0; k < dd; k++ {
			for r := 0; r < m; r++ {
				mu[r], gmu[r] = t.w[o+r*dd+k], grad[o+r*dd+k]
			}
			ls := wl.offS() + k*m*(m+1)/2
			unpackLower(w, t.w[ls:], m)
			unpackLower(gw, grad[ls:], m)
			gamma := g
			for !natStep(m, mu, w, gmu, gw, gamma, mu2, w2, scr) || natStepSize(m, mu, w, mu2, w2) > maxStep[i] {
				gamma /= 2
				if gamma < 1e-6*g {
					copy(mu2, mu)
					copy(w2, w)
					break
				}
			}
			for r := 0; r < m; r++ {
				step[o+r*dd+k] = mu2[r] - mu[r]
			}
			j := ls
			for r := 0; r < m; r++ {
				for c := 0; c <= r; c++ {
					if r == c {
						step[j] = math.Log(w2[r*m+c]) - math.Log(w[r*m+c])
					} else {
						step[j] = w2[r*m+c] - w[r*m+c]
					}
					j++
				}
			}
		}
	}
}

// natStepSize is the ∞-norm of the step from (mu, w) to (mu2, w2) in the
// optimizer's coordinates (the logarithms of W's diagonal).
func natStepSize(m int, mu, w, mu2, w2 []float64) float64 {
	var s float64
	for r := 0; r < m; r++ {
		s = math.Max(s, math.Abs(mu2[r]-mu[r]))
		for c := 0; c < r; c++ {
			s = math.Max(s, math.Abs(w2[r*m+c]-w[r*m+c]))
		}
		s = math.Max(s, math.Abs(math.Log(w2[r*m+r]/w[r*m+r])))
	}
	return s
}

// mulInto sets c = a·b (tb: a·bᵀ) for M×M row-major matrices.
func mulInto(c, a, b []float64, m int, tb bool) {
	for r := 0; r < m; r++ {
		for col := 0; col < m; col++ {
			var s float64
			for k := 0; k < m; k++ {
				if tb {
					s += a[r*m+k] * b[col*m+k]
				} else {
					s += a[r*m+k] * b[k*m+col]
				}
			}
			c[r*m+col] = s
		}
	}
}

// hiddenQ reports whether parameter info is a hidden layer's q(u) of an
// nl-layer model.
func hiddenQ(info engine.ParamInfo, nl int) bool {
	return info.Layer < nl-1 && (info.Group == engine.GroupQMu || info.Group == engine.GroupQSqrt)
}
