package engine

import (
	"fmt"

	"dgpviz/internal/linalg"

	"gonum.org/v1/gonum/mat"
)

// The final layer's q(u) at its optimum (Options.OptimalFinalQ).
//
// The bound depends on the final layer's q(u_d) = N(m_d, S_d) through the
// likelihood, the propagation penalty and the KL alone, and there the
// likelihood's trace and the propagation combine: with Φ = ΣΨ2 (Ψ1ᵀΨ1 for
// a certain input), K = Kuu and, whitened, u = L·v (K = L·Lᵀ, W = L⁻¹),
// q(v_d) = N(μ_d, Σ_d), V = Ψ1·Wᵀ, Φ_W = W·Φ·Wᵀ, they are
//
//	Σ_d −(y_dᵀy_d − 2 y_dᵀV μ_d + μ_dᵀΦ_Wμ_d + tr(Φ_W Σ_d))/(2s²)
//	    − ½(tr Σ_d + μ_dᵀμ_d − M − log|Σ_d|),
//
// a concave quadratic in μ_d and Σ_d with its maximum at
//
//	Σ = P⁻¹, μ_d = P⁻¹Vᵀy_d/s², P = I + Φ_W/s²,
//
// that is S = K(K + Φ/s²)⁻¹K and m_d = K(K + Φ/s²)⁻¹Ψ1ᵀy_d/s² (Titsias,
// 2009; Titsias & Lawrence, 2010, with uncertain inputs). The maximum is
// the collapsed bound, −Σ_d y_dᵀy_d/(2s²) + ½ Σ_d c_dᵀP⁻¹c_d − ½D·log|P|
// (c_d = Vᵀy_d/s²) in these terms. Since the bound is stationary in q(u)
// there, its gradient w.r.t. everything else is the gradient at fixed
// q(u) (the envelope theorem): the evaluation finds the optimum from a
// first pass over the data (the Ψ statistics do not depend on q(u)) and
// then evaluates the bound and its gradient at it as at any q(u).

// OptimalQ is a layer's q(u) at its optimum: the same covariance for
// every output, S = Sqrt·Sqrtᵀ, and the means Mu.
type OptimalQ struct {
	Mu   *mat.Dense // M × D
	Sqrt *mat.Dense // M × M, lower triangular with a positive diagonal
}

// Apply writes q into l's QMu and QSqrt (a copy of Sqrt per output),
// reusing their storage when the shapes match.
func (q *OptimalQ) Apply(l *Layer) {
	m, d := q.Mu.Dims()
	if r, c := l.QMu.Dims(); r == m && c == d {
		l.QMu.Copy(q.Mu)
	} else {
		l.QMu = mat.DenseCopyOf(q.Mu)
	}
	if len(l.QSqrt) != d {
		l.QSqrt = make([]*mat.Dense, d)
	}
	for k, s := range l.QSqrt {
		if s == nil {
			l.QSqrt[k] = mat.DenseCopyOf(q.Sqrt)
			continue
		}
		if r, c := s.Dims(); r != m || c != m {
			l.QSqrt[k] = mat.DenseCopyOf(q.Sqrt)
			continue
		}
		s.Copy(q.Sqrt)
	}
}

// OptimalFinalQ returns the final layer's q(u) at its optimum given the
// rest of m (see Options.OptimalFinalQ), without the gradient.
func (e *Evaluator) OptimalFinalQ(m *Model) (*OptimalQ, error) {
	res, _, err := e.Evaluate(m, Options{OptimalFinalQ: true, NoOutputMessage: true})
	if err != nil {
		return nil, err
	}
	return res.FinalQ, nil
}

// optimalFinalQ runs the final layer's first pass over the data, which
// must be prepared (w.prepare) with any valid q(u), and returns q(u) at
// its optimum, and the layer with it (sharing l's kernel and Z, the same
// factor for every output) to evaluate the bound at.
func (e *Evaluator) optimalFinalQ(w *layerWork, l *Layer, n int, in, inVar []float64, side ...func()) (*OptimalQ, *Layer, error) {
	e.forward(w, n, in, inVar, false, false, fwdStats, nil, side...)
	phiW := w.p11W // W·Ψ1ᵀΨ1·Wᵀ: a certain input has no propagation
	if inVar != nil {
		phiW = w.psi2W // W·ΣΨ2·Wᵀ from penaltySums, compensated where it needs
	}
	sc := &w.scratch
	sc.next = 0
	vty := sc.take(w.m * w.d)
	e.productsTN(w.m, n, tnProduct{c: vty, cols: w.d, a: w.v, b: e.y, alpha: 1 / w.s2})
	return e.solveFinalQ(w, l, phiW, vty)
}

// solveFinalQ returns the final layer's q(u) at its optimum from the
// statistics of all the data, Φ_W = W·Φ·Wᵀ and Vᵀy/s² (M×D), for the layer
// prepared in w, and the layer with it (as optimalFinalQ). It takes its
// temporaries from w.scratch, after those taken.
func (e *Evaluator) solveFinalQ(w *layerWork, l *Layer, phiW, vty []float64) (*OptimalQ, *Layer, error) {
	m, d := w.m, w.d
	mm2 := m * m
	inv := 1 / w.s2
	sc := &w.scratch
	// P = I + Φ_W/s², factored from its last row and column (P = U·Uᵀ,
	// U upper triangular) so that its inverse has the lower triangular
	// factor U⁻ᵀ: the Cholesky factor L' of J·P·J (J reverses the order)
	// gives U = J·L'·J and U⁻ᵀ = J·L'⁻ᵀ·J.
	rev := sc.take(mm2)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			v := inv * phiW[(m-1-i)*m+(m-1-j)]
			if i == j {
				v++
			}
			rev[i*m+j] = v
		}
	}
	if !linalg.Cholesky(rev, rev, m) {
		return nil, nil, fmt.Errorf("the final layer's optimal q(u): I + W·Ψ2·Wᵀ/s² is not positive definite (noise variance %g): %w", w.s2, ErrNotFinite)
	}
	lt := sc.take(mm2) // (L'⁻¹)ᵀ
	linalg.LowerInverseT(lt, rev, m)
	t := sc.take(mm2) // T = U⁻ᵀ, T·Tᵀ = P⁻¹
	for i := 0; i < m; i++ {
		for j := 0; j <= i; j++ {
			t[i*m+j] = lt[(m-1-i)*m+(m-1-j)]
		}
	}
	// μ = T·Tᵀ·Vᵀy/s².
	tmp := sc.take(m * d)
	mm(tmp, m, d, m, t, true, vty, false, 1, 0)
	mu := sc.take(m * d)
	mm(mu, m, d, m, t, false, tmp, false, 1, 0)
	// The natural parameters: m = L·μ and L_S = L·T.
	q := &OptimalQ{Mu: mat.NewDense(m, d, nil), Sqrt: mat.NewDense(m, m, nil)}
	mm(q.Mu.RawMatrix().Data, m, d, m, w.chol, false, mu, false, 1, 0)
	sq := q.Sqrt.RawMatrix().Data
	for i := 0; i < m; i++ {
		for j := 0; j <= i; j++ {
			var s float64
			for k := j; k <= i; k++ {
				s += w.chol[i*m+k] * t[k*m+j]
			}
			sq[i*m+j] = s
		}
	}
	for i := 0; i < m; i++ {
		if !(sq[i*m+i] > 0) {
			return nil, nil, fmt.Errorf("the final layer's optimal q(u) is singular: %w", ErrNotFinite)
		}
	}
	opt := *l
	opt.QMu = q.Mu
	opt.QSqrt = make([]*mat.Dense, d)
	for k := range opt.QSqrt {
		opt.QSqrt[k] = q.Sqrt // read only, by prepare
	}
	return q, &opt, nil
}
