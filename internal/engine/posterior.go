package engine

import (
	"fmt"

	"dgpviz/internal/linalg"

	"gonum.org/v1/gonum/mat"
)

// LayerPosterior is a layer's sparse GP at certain inputs: the quantities
// that depend only on its parameters, factorised once.
type LayerPosterior struct {
	Layer  *Layer
	Jitter float64
	Kuu    *mat.SymDense // k(Z,Z) + jitter·I
	L      *mat.TriDense // lower Cholesky factor of Kuu
	KInv   *mat.SymDense
	A      *mat.Dense // Kuu⁻¹ m, M × D
}

// NewLayerPosterior factorises the layer's Kuu. The error wraps
// ErrNotPositiveDefinite when that fails.
func NewLayerPosterior(l *Layer, jitter float64) (*LayerPosterior, error) {
	m, _, _ := l.Dims()
	z := linalg.Flatten(nil, l.InducingInputs)
	k := make([]float64, m*m)
	Cov(l.Kernel, k, z, z)
	for i := 0; i < m; i++ {
		k[i*m+i] += jitter
	}
	lk := make([]float64, m*m)
	if !linalg.Cholesky(lk, k, m) {
		return nil, fmt.Errorf("%w with jitter %g", ErrNotPositiveDefinite, jitter)
	}
	inv := make([]float64, m*m)
	linalg.CholInverse(inv, lk, m)
	p := &LayerPosterior{Layer: l, Jitter: jitter, Kuu: mat.NewSymDense(m, k),
		L: mat.NewTriDense(m, mat.Lower, lk), KInv: mat.NewSymDense(m, inv)}
	p.A = mat.NewDense(m, l.QMu.RawMatrix().Cols, nil)
	p.A.Mul(p.KInv, l.QMu)
	return p, nil
}

// CrossCov writes k(x, Z) for one point x into dst (length M).
func (p *LayerPosterior) CrossCov(dst, x []float64) {
	m, q, _ := p.Layer.Dims()
	for j := 0; j < m; j++ {
		dst[j] = p.Layer.Kernel.Eval(x, p.Layer.InducingInputs.RawRowView(j)[:q])
	}
}

// FunctionAt returns the layer's latent function at a certain input x:
// for each output d the mean k(x,Z)A_d and the variance from q(u),
// k(x,Z) B_d k(Z,x); and the conditional variance of f given u,
// k(x,x) − k(x,Z) Kuu⁻¹ k(Z,x), shared by all outputs. The noise variance
// is not included. kx is scratch of length M (allocated when nil). It is
// FunctionOn at one point.
func (p *LayerPosterior) FunctionAt(x []float64, kx []float64, mean, varU []float64) (varCond float64) {
	m, _, _ := p.Layer.Dims()
	if kx == nil {
		kx = make([]float64, m)
	}
	vc := []float64{0}
	p.FunctionOn(x, mean, varU, vc, &FunctionScratch{k: kx})
	return vc[0]
}

// FunctionScratch holds FunctionOn's work space between calls (the zero
// value is ready to use).
type FunctionScratch struct{ k, t []float64 }

// FunctionOn is FunctionAt at G inputs at once: x is G×Q (row-major), and
// it writes mean and varU (G×D, row-major) and varCond (G). With
// K = k(x, Z) and T = K Kuu⁻¹: mean = K A, varCond = k(x,x) − rowsum(K∘T),
// varU_d = ‖T L_d‖² row by row, in plain loops (a grid of 64 points on
// M ≤ 64 inducing points is too small for BLAS to pay). sc (nil: allocate)
// keeps the scratch between calls.
func (p *LayerPosterior) FunctionOn(x, mean, varU, varCond []float64, sc *FunctionScratch) {
	mz, q, d := p.Layer.Dims()
	g := len(x) / q
	if len(x) != g*q || len(mean) < g*d || len(varU) < g*d || len(varCond) < g {
		panic("engine: FunctionOn: argument of the wrong length")
	}
	if sc == nil {
		sc = &FunctionScratch{}
	}
	sc.k, sc.t = linalg.Resize(sc.k, g*mz), linalg.Resize(sc.t, g*mz)
	K, T := sc.k, sc.t
	Cov(p.Layer.Kernel, K, x, linalg.Flatten(nil, p.Layer.InducingInputs))
	kinv := p.KInv.RawSymmetric() // upper triangle, row-major
	at := func(r, c int) float64 {
		if r > c {
			r, c = c, r
		}
		return kinv.Data[r*kinv.Stride+c]
	}
	A := p.A.RawMatrix()
	for j := 0; j < g; j++ {
		kr, tr := K[j*mz:(j+1)*mz], T[j*mz:(j+1)*mz]
		for c := range mz {
			var v float64
			for r := range mz {
				v += kr[r] * at(r, c)
			}
			tr[c] = v
		}
		xj := x[j*q : (j+1)*q]
		varCond[j] = p.Layer.Kernel.Eval(xj, xj) - linalg.Dot(kr, tr)
		for k := range d {
			var v float64
			for r := range mz {
				v += kr[r] * A.Data[r*A.Stride+k]
			}
			mean[j*d+k] = v
		}
	}
	for k, s := range p.Layer.QSqrt {
		L := s.RawMatrix()
		for j := 0; j < g; j++ {
			tr := T[j*mz : (j+1)*mz]
			var v float64
			for c := range mz { // (T L)_c = Σ_{r ≥ c} t_r L_rc
				var w float64
				for r := c; r < mz; r++ {
					w += tr[r] * L.Data[r*L.Stride+c]
				}
				v += w * w
			}
			varU[j*d+k] = v
		}
	}
}

// InducingMarginals returns q(u)'s marginal variances, diag(L_d L_dᵀ), as
// an M×D row-major slice (the means are QMu).
func (l *Layer) InducingMarginals() []float64 {
	mz, _, d := l.Dims()
	out := make([]float64, mz*d)
	for k, s := range l.QSqrt {
		raw := s.RawMatrix()
		for r := 0; r < mz; r++ {
			row := raw.Data[r*raw.Stride : r*raw.Stride+r+1]
			out[r*d+k] = linalg.Dot(row, row)
		}
	}
	return out
}

// Predict propagates the inputs x (N × Q(0), certain) through every layer
// and returns each layer's output message (mean and variance).
func (e *Evaluator) Predict(m *Model, x *mat.Dense) ([]Message, error) {
	return e.PredictLayers(m, x, len(m.Layers))
}

// PredictLayers is Predict through the first `layers` layers only. It needs
// only ψ1 per datum, so it costs a fraction of an evaluation of the bound
// (no Ψ2 statistics, no penalties). It runs over chunks of
// DefaultChunkRows inputs, so that its workspace does not grow with N
// (every datum gets the same arithmetic in any chunk).
func (e *Evaluator) PredictLayers(m *Model, x *mat.Dense, layers int) ([]Message, error) {
	if err := m.validate(noRows); err != nil { // the data are not used: x is checked below
		return nil, err
	}
	if layers < 1 || layers > len(m.Layers) {
		return nil, fmt.Errorf("%d layers requested of %d", layers, len(m.Layers))
	}
	n, q := x.Dims()
	if _, q0 := m.X.Dims(); q != q0 {
		return nil, fmt.Errorf("the inputs have %d columns, the model %d", q, q0)
	}
	if err := CheckFinite(x, "inputs"); err != nil {
		return nil, err
	}
	for len(e.layers) < layers {
		e.layers = append(e.layers, &layerWork{})
	}
	e.startTeam(min(n, DefaultChunkRows))
	out := make([]Message, layers)
	for i, l := range m.Layers[:layers] {
		if err := e.layers[i].prepare(l, m.Jitter, 1, false); err != nil {
			return nil, fmt.Errorf("layer %d: %w", i+1, err)
		}
		_, _, d := l.Dims()
		out[i] = Message{Mean: mat.NewDense(n, d, nil), Var: mat.NewDense(n, d, nil)}
	}
	for lo := 0; lo < n; lo += DefaultChunkRows {
		hi := min(n, lo+DefaultChunkRows)
		var in, inVar []float64
		in, e.xbuf = rangeRows(e.xbuf, x, lo, hi)
		for i, w := range e.layers[:layers] {
			e.forward(w, hi-lo, in, inVar, false, true, fwdMessages, nil)
			copy(out[i].Mean.RawMatrix().Data[lo*w.d:hi*w.d], w.mean)
			copy(out[i].Var.RawMatrix().Data[lo*w.d:hi*w.d], w.vr)
			in, inVar = w.mean, w.vr
		}
	}
	return out, nil
}

// PsiStats computes the psi statistics of kernel k for one input
// h ~ N(mu, diag s) (s nil: a certain input) and inducing inputs z (M × Q,
// row-major): it writes ψ1 = E[k(h, Z)] into psi1 (length M) and
// Ψ2 = E[k(Z, h) k(h, Z)] into psi2 (M × M, row-major) and returns
// ψ0 = E[k(h, h)]. It shares the bound's code paths, for callers that need
// the statistics at inputs other than the data (the message figure).
func PsiStats(k Kernel, z []float64, mu, s []float64, psi1, psi2 []float64) float64 {
	q := k.InputDim()
	m := len(z) / q
	if len(mu) != q || (s != nil && len(s) != q) || len(psi1) != m || len(psi2) != m*m {
		panic("engine: PsiStats: argument of the wrong length")
	}
	k.psi1(psi1, mu, s, z, nil)
	if s == nil {
		for i, a := range psi1 {
			for j, b := range psi1 {
				psi2[i*m+j] = a * b
			}
		}
		return k.psi0(mu, nil)
	}
	p2 := k.newPsi2(z, m, nil)
	zero := make([]float64, m*m)
	p2.setWeights(nil, zero, zero)
	acc := &psi2Acc{buf: make([]float64, p2.accLen())}
	p2.datum(acc, mu, s, psi1, make([]float64, q), make([]float64, q))
	p2.sum(acc, psi2)
	return k.psi0(mu, s)
}
