package montecarlo

import (
	"fmt"
	"math"

	"dgpviz/internal/engine"
	"dgpviz/internal/linalg"
)

// Layer is one GP layer prepared for sampling its true response and for
// computing its exact Gaussian message and penalty terms at any Gaussian
// input. It copies what it needs from the engine.Layer, so later changes
// to that layer do not affect it. A Layer is safe for concurrent use.
type Layer struct {
	m, q, d int
	kernel  engine.Kernel
	kind    kernelKind
	rbfVar  float64   // RBF variance
	rbfH    []float64 // RBF ½/ℓ_q²
	linV    []float64 // linear variances
	noise   float64

	z   []float64   // M×Q inducing inputs
	lk  []float64   // M×M lower Cholesky factor of Kuu (with jitter)
	c   [][]float64 // D of M: Lk⁻¹ m_d
	pt  [][]float64 // D of M×M: (Lk⁻¹ L_d)ᵀ, upper triangular
	qmu [][]float64 // D of M: m_d
	qsd [][]float64 // D of M: sqrt(S_d[m][m])

	kinv []float64   // M×M Kuu⁻¹
	a    [][]float64 // D of M: A_d = Kuu⁻¹ m_d
	b    [][]float64 // D of M×M: B_d = Kuu⁻¹ S_d Kuu⁻¹
	w    [][]float64 // D of M×M: A_d A_dᵀ + B_d
}

type kernelKind int

const (
	kindOther kernelKind = iota
	kindRBF
	kindLinear
)

// NewLayer prepares layer l with the given jitter on Kuu (use the model's
// Jitter so that messages match the engine's). It returns an error, never
// panics, for a malformed layer or a Kuu that is not positive definite.
func NewLayer(l *engine.Layer, jitter float64) (*Layer, error) {
	if err := checkLayer(l); err != nil {
		return nil, err
	}
	if !(jitter >= 0) || math.IsInf(jitter, 0) {
		return nil, fmt.Errorf("jitter %v must be finite and ≥ 0", jitter)
	}
	post, err := engine.NewLayerPosterior(l, jitter)
	if err != nil {
		return nil, err
	}
	m, q, d := l.Dims()
	ly := &Layer{m: m, q: q, d: d, kernel: l.Kernel.Clone(), noise: l.NoiseVariance}
	kern := ly.kernel
	if iso, ok := kern.(*engine.RBFIso); ok {
		kern = iso.ARD() // the same kernel with Q equal lengthscales
	}
	switch k := kern.(type) {
	case *engine.RBF:
		ly.kind, ly.rbfVar = kindRBF, k.Variance
		for _, ls := range k.Lengthscales {
			ly.rbfH = append(ly.rbfH, 0.5/(ls*ls))
		}
	case *engine.Linear:
		ly.kind, ly.linV = kindLinear, append([]float64(nil), k.Variances...)
	}
	ly.z = linalg.Flatten(nil, l.InducingInputs)

	ly.lk = make([]float64, m*m)
	for i := 0; i < m; i++ {
		for j := 0; j <= i; j++ {
			ly.lk[i*m+j] = post.L.At(i, j)
		}
	}
	ly.kinv = linalg.Flatten(nil, post.KInv)

	for k := 0; k < d; k++ {
		mk := make([]float64, m)
		sd := make([]float64, m)
		lower := make([]float64, m*m)
		for i := 0; i < m; i++ {
			mk[i] = l.QMu.At(i, k)
			for j := 0; j <= i; j++ {
				v := l.QSqrt[k].At(i, j)
				lower[i*m+j] = v
				sd[i] += v * v
			}
			sd[i] = math.Sqrt(sd[i])
		}
		ly.qmu = append(ly.qmu, mk)
		ly.qsd = append(ly.qsd, sd)

		// c_d = Lk⁻¹ m_d.
		c := make([]float64, m)
		copy(c, mk)
		linalg.ForwardSolve(ly.lk, m, c)
		ly.c = append(ly.c, c)

		// P_d = Lk⁻¹ L_d is lower triangular; store its transpose.
		p := make([]float64, m*m)
		col := make([]float64, m)
		for j := 0; j < m; j++ {
			for i := range col {
				col[i] = lower[i*m+j]
			}
			linalg.ForwardSolve(ly.lk, m, col)
			for i := j; i < m; i++ {
				p[j*m+i] = col[i]
			}
		}
		ly.pt = append(ly.pt, p)

		// A_d, B_d = Kuu⁻¹ L_d L_dᵀ Kuu⁻¹ and W_d = A_d A_dᵀ + B_d.
		a := make([]float64, m)
		for i := 0; i < m; i++ {
			a[i] = post.A.At(i, k)
		}
		ly.a = append(ly.a, a)
		kl := make([]float64, m*m) // Kuu⁻¹ L_d
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				var s float64
				for r := j; r < m; r++ {
					s += ly.kinv[i*m+r] * lower[r*m+j]
				}
				kl[i*m+j] = s
			}
		}
		b := make([]float64, m*m)
		w := make([]float64, m*m)
		for i := 0; i < m; i++ {
			for j := 0; j <= i; j++ {
				var s float64
				for r := 0; r < m; r++ {
					s += kl[i*m+r] * kl[j*m+r]
				}
				b[i*m+j], b[j*m+i] = s, s
				w[i*m+j] = s + a[i]*a[j]
				w[j*m+i] = w[i*m+j]
			}
		}
		ly.b = append(ly.b, b)
		ly.w = append(ly.w, w)
	}
	return ly, nil
}

// checkLayer checks what NewLayer needs so that malformed layers give
// errors rather than panics.
func checkLayer(l *engine.Layer) error {
	if l == nil {
		return fmt.Errorf("nil layer")
	}
	if l.Kernel == nil || l.InducingInputs == nil || l.QMu == nil {
		return fmt.Errorf("layer needs a kernel, inducing inputs and q_mu")
	}
	m, q := l.InducingInputs.Dims()
	mq, d := l.QMu.Dims()
	switch {
	case m < 1 || m > engine.MaxInducing:
		return fmt.Errorf("%d inducing inputs, want 1…%d", m, engine.MaxInducing)
	case mq != m:
		return fmt.Errorf("q_mu has %d rows, want %d", mq, m)
	case l.Kernel.InputDim() != q:
		return fmt.Errorf("kernel has input dimension %d, inducing inputs %d", l.Kernel.InputDim(), q)
	case len(l.QSqrt) != d:
		return fmt.Errorf("%d q_sqrt matrices, want %d", len(l.QSqrt), d)
	case !(l.NoiseVariance > 0) || math.IsInf(l.NoiseVariance, 0):
		return fmt.Errorf("noise variance %v must be finite and > 0", l.NoiseVariance)
	}
	for k, s := range l.QSqrt {
		if s == nil {
			return fmt.Errorf("q_sqrt of output %d is missing", k+1)
		}
		if r, c := s.Dims(); r != m || c != m {
			return fmt.Errorf("q_sqrt of output %d is %d×%d, want %d×%d", k+1, r, c, m, m)
		}
	}
	return nil
}

// Dims returns the number of inducing points M, the input dimension Q and
// the output dimension D.
func (l *Layer) Dims() (m, q, d int) { return l.m, l.q, l.d }

// NoiseVariance returns the layer's noise variance σ².
func (l *Layer) NoiseVariance() float64 { return l.noise }

// crossCov writes k(x, Z) into kx (length M) and returns k(x, x).
func (l *Layer) crossCov(kx, x []float64) float64 {
	m, q := l.m, l.q
	switch l.kind {
	case kindRBF:
		if q == 1 {
			x0, h := x[0], l.rbfH[0]
			for j := 0; j < m; j++ {
				d := x0 - l.z[j]
				kx[j] = l.rbfVar * math.Exp(-d*d*h)
			}
			return l.rbfVar
		}
		for j := 0; j < m; j++ {
			zj := l.z[j*q : (j+1)*q]
			var e float64
			for r, h := range l.rbfH {
				d := x[r] - zj[r]
				e += d * d * h
			}
			kx[j] = l.rbfVar * math.Exp(-e)
		}
		return l.rbfVar
	case kindLinear:
		var kxx float64
		for r, v := range l.linV {
			kxx += v * x[r] * x[r]
		}
		for j := 0; j < m; j++ {
			zj := l.z[j*q : (j+1)*q]
			var s float64
			for r, v := range l.linV {
				s += v * x[r] * zj[r]
			}
			kx[j] = s
		}
		return kxx
	}
	for j := 0; j < m; j++ {
		kx[j] = l.kernel.Eval(x, l.z[j*q:(j+1)*q])
	}
	return l.kernel.Eval(x, x)
}

// conditional computes, for a certain input x, the mean of f_d(x) under
// q(u) (mean, length D), its variance from the spread of q(u) (varU,
// length D) and the conditional variance of f given u, k(x,x) −
// k(x,Z)Kuu⁻¹k(Z,x) (returned). kx and v are scratch of length M. It does
// not allocate.
func (l *Layer) conditional(x, kx, v, mean, varU []float64, wantU bool) (varCond float64) {
	m := l.m
	kxx := l.crossCov(kx, x)
	copy(v, kx)
	linalg.ForwardSolve(l.lk, m, v) // v = Lk⁻¹ k(Z,x)
	var vv float64
	for _, t := range v {
		vv += t * t
	}
	for k := 0; k < l.d; k++ {
		c := l.c[k]
		var s float64
		for i, t := range v {
			s += t * c[i]
		}
		mean[k] = s
		if !wantU {
			continue
		}
		// k Kuu⁻¹ S_d Kuu⁻¹ kᵀ = ‖P_dᵀ v‖², P_dᵀ upper triangular.
		p := l.pt[k]
		var u float64
		for j := 0; j < m; j++ {
			row := p[j*m+j : j*m+m]
			vj := v[j:]
			var r float64
			for i, pv := range row {
				r += pv * vj[i]
			}
			u += r * r
		}
		varU[k] = u
	}
	return math.Max(kxx-vv, 0)
}

// FunctionAt returns the layer's latent function at a certain input x
// (length Q): for each output d the mean under q(u) and the variance from
// the spread of q(u), written to mean and varU (length D each), and the
// conditional variance of f given u, shared by all outputs. The noise
// variance is not included.
func (l *Layer) FunctionAt(x, mean, varU []float64) (varCond float64, err error) {
	if len(x) != l.q || len(mean) != l.d || len(varU) != l.d {
		return 0, fmt.Errorf("FunctionAt: x has length %d (want %d), mean and varU %d and %d (want %d)", len(x), l.q, len(mean), len(varU), l.d)
	}
	kx := make([]float64, l.m)
	v := make([]float64, l.m)
	return l.conditional(x, kx, v, mean, varU, true), nil
}
