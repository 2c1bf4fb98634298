package engine

import (
	"fmt"
	"math"

	"dgpviz/internal/linalg"
)

// layerWork is one layer's workspace: quantities that depend only on the
// layer's parameters (prepared once per evaluation) and per-datum arrays.
type layerWork struct {
	kernel  Kernel
	m, q, d int
	s2      float64
	scale   float64

	z, qmu         []float64 // M×Q, M×D
	lcat           []float64 // [L_1 … L_D], M × M·D, each lower triangular
	kff, kuu, kinv []float64 // M×M; kff has no jitter
	chol           []float64 // the Cholesky factor L of kuu, M×M
	lw, lwT        []float64 // W = L⁻¹ and Wᵀ, M×M (Kinv = Wᵀ·W)
	logdet         float64
	a              []float64 // A = Kinv·m, M×D
	aT             []float64 // Aᵀ, D×M
	ssum, bsum     []float64 // Σ_d S_d and Kinv·Σ_d S_d·Kinv, M×M
	xW, tW         []float64 // M×M scratch of prepare
	// uncertain is set by the caller before prepare when the layer's input
	// is a Gaussian message: prepare then computes C and g2 too.
	uncertain, haveBsum, haveC bool
	// noKLGrad leaves the KL's part out of the parameter gradient: a
	// chunk of a chunked evaluation other than the first, whose gradients
	// are summed (EvaluateChunked).
	noKLGrad bool
	// gradInto, when not nil, is the gradient that paramGradient adds the
	// layer's to, instead of returning a new one (EvaluateChunked).
	gradInto *LayerGradient
	// compensate: W·x·Wᵀ of a product x of kernel values may lose more
	// than compensateAbove of it (whitenRoundoff): ΣΨ2 is summed from
	// double-double entries and W·ΣΨ2·Wᵀ formed in compensated arithmetic.
	compensate bool
	lcatT      []float64 // Lcatᵀ, M·D × M
	c          []float64 // C = Σ_d A_d A_dᵀ + B_d, M×M
	g2         []float64 // ∂bound/∂Ψ2_n = scale·(D·Kinv − C)/(2 s2), M×M
	kl         float64
	psi2       psi2Kernel
	sW         []float64 // W·Ssum·Wᵀ, M×M
	mW         []float64 // W·m, M×D

	in, inVar   []float64  // input message N×Q (inVar nil: certain input)
	psi1        []float64  // N×M
	comp, prop  []float64  // N
	mean, vr    []float64  // N×D (vr nil when not requested)
	kLcat       []float64  // Kinv·Lcat, M × M·D, when vr is computed
	wLcat       []float64  // W·Lcat, M × M·D, on the way to kLcat
	kLcatT      []float64  // its transpose, M·D × M, for the backward pass
	u           []float64  // U = Ψ1·Kinv·Lcat, N × M·D, when vr is computed
	dIn, dInVar []float64  // gradient w.r.t. the input message, N×Q (nil for a certain input)
	accs        []*psi2Acc // per chunk
	baccs       []*gradAcc // per chunk, for the backward pass
	sumPsi2     []float64  // Σ_n Ψ2_n, M×M
	sumPsi2Lo   []float64  // its low part: Σ_n Ψ2_n = sumPsi2 + sumPsi2Lo
	scratch     arena      // the backward pass's temporaries
	likSq       float64    // Σ (y − mean)² of the evaluated rows
	likTr       float64    // Σ_n ψ1_n Bsum ψ1_nᵀ
	p11         []float64  // Ψ1ᵀΨ1, M×M
	v           []float64  // V = Ψ1·Wᵀ, N×M
	p11W        []float64  // VᵀV = W·Ψ1ᵀΨ1·Wᵀ, M×M
	psi2W       []float64  // W·ΣΨ2·Wᵀ, M×M (uncertain input)
	psi2WLo     []float64  // scratch of whitenCompensated, 2·M×M + M
	psi0n       []float64  // ψ0 per datum, N (uncertain input)
	tmpW        []float64  // M×M scratch of the whitened sums
	compSum     float64    // Σ_n compression_n, from whitened sums
	propSum     float64    // Σ_n propagation_n, from whitened sums
	gMean       []float64  // the likelihood's gradient w.r.t. the mean (last layer)
	y           []float64  // the likelihood's data (last layer), N×D, read only
	iso         *isoRows   // an isotropic RBF's product form on a certain input, or nil

	// rowTmp is per chunk psi1's and psi1Grad's per-datum scratch
	// (rowScratch), kept between evaluations.
	rowTmp [][]float64
}

// prepare computes everything that depends only on the layer's parameters.
func (w *layerWork) prepare(l *Layer, jitter, scale float64, grad bool) error {
	m, q, d := l.Dims()
	w.kernel, w.m, w.q, w.d, w.s2, w.scale = l.Kernel, m, q, d, l.NoiseVariance, scale
	w.z = linalg.Flatten(w.z, l.InducingInputs)
	mm2 := m * m
	w.kff = linalg.Resize(w.kff, mm2)
	Cov(l.Kernel, w.kff, w.z, w.z)
	w.kuu = linalg.Resize(w.kuu, mm2)
	copy(w.kuu, w.kff)
	for i := 0; i < m; i++ {
		w.kuu[i*m+i] += jitter
	}
	w.chol = linalg.Resize(w.chol, mm2)
	w.kinv = linalg.Resize(w.kinv, mm2)
	if !linalg.Cholesky(w.chol, w.kuu, m) {
		return fmt.Errorf("inducing_inputs: %w with jitter %g (are two inducing inputs too close?)", ErrNotPositiveDefinite, jitter)
	}
	w.logdet = 2 * linalg.LogAbsDiag(w.chol, m)
	w.lwT = linalg.Resize(w.lwT, mm2)
	linalg.LowerInverseT(w.lwT, w.chol, m)
	linalg.InverseFromT(w.kinv, w.lwT, m)
	w.lw = linalg.Resize(w.lw, mm2)
	transpose(w.lw, w.lwT, m, m, m)
	w.compensate = whitenRoundoff(w.lw, w.kuu) > compensateAbove
	w.psi2 = l.Kernel.newPsi2(w.z, m, w.psi2)
	w.prepareQ(l, grad)
	return nil
}

// prepareQ computes what depends on the layer's q(u) (and on what prepare
// computed before it): after a prepare of the same kernel, Z and noise,
// it alone sets up another q(u) — the final layer's optimum
// (optimalFinalQ).
func (w *layerWork) prepareQ(l *Layer, grad bool) {
	m, d := w.m, w.d
	mm2 := m * m
	w.qmu = linalg.Flatten(w.qmu, l.QMu)
	w.lcat = linalg.Resize(w.lcat, m*m*d)
	for k, lk := range l.QSqrt {
		raw := lk.RawMatrix()
		for i := 0; i < m; i++ {
			row := w.lcat[i*m*d+k*m : i*m*d+(k+1)*m]
			copy(row[:i+1], raw.Data[i*raw.Stride:i*raw.Stride+i+1])
			clear(row[i+1:])
		}
	}
	w.a = linalg.Resize(w.a, m*d)
	w.aT = linalg.Resize(w.aT, m*d)
	w.ssum = linalg.Resize(w.ssum, mm2)
	// Lcatᵀ = [L_1ᵀ; …; L_Dᵀ], block by block from q_sqrt (the blocks fit
	// in the cache, where transposing Lcat as a whole does not).
	w.lcatT = linalg.Resize(w.lcatT, m*m*d)
	logdetS := 0.0
	for k, lk := range l.QSqrt {
		raw := lk.RawMatrix()
		blk := w.lcatT[k*m*m : (k+1)*m*m]
		for j := 0; j < m; j++ {
			row := blk[j*m : (j+1)*m]
			clear(row[:j])
			for i := j; i < m; i++ {
				row[i] = raw.Data[i*raw.Stride+j]
			}
		}
		logdetS += 2 * linalg.LogAbsDiag(blk, m)
	}
	// Ssum = Σ_d L_d L_dᵀ = Lcat·Lcatᵀ. (A triangular loop does a third
	// of the multiply-adds, but in scalar dot products that were slower.)
	mm(w.ssum, m, m, m*d, w.lcat, false, w.lcatT, false, 1, 0)
	linalg.Symmetrize(w.ssum, m)
	// The whitened S and m, for the sums of the penalties and the
	// likelihood's trace (forward, likelihood).
	w.tmpW = linalg.Resize(w.tmpW, mm2)
	w.sW = linalg.Resize(w.sW, mm2)
	w.whiten(w.sW, w.ssum, w.tmpW)
	w.mW = linalg.Resize(w.mW, m*d)
	mm(w.mW, m, d, m, w.lw, false, w.qmu, false, 1, 0)
	// A = Kinv·m = Wᵀ(W·m).
	mm(w.a, m, d, m, w.lwT, false, w.mW, false, 1, 0)
	transpose(w.aT, w.a, m, d, d)
	w.haveBsum, w.haveC = false, false
	if w.uncertain {
		w.prepareUncertain(grad)
	}

	// KL = ½[tr(Kinv Σ S_d) + Σ_d m_dᵀ Kinv m_d − D·M + D·log|Kuu| − Σ_d log|S_d|].
	// tr(Kinv Ssum) = tr(W·Ssum·Wᵀ) and m_dᵀ Kinv m_d = ‖W m_d‖², whitened.
	var trS float64
	for i := 0; i < m; i++ {
		trS += w.sW[i*m+i]
	}
	w.kl = 0.5 * (trS + linalg.Dot(w.mW, w.mW) - float64(d*m) + float64(d)*w.logdet - logdetS)
}

// prepareBsum computes Bsum = Kinv·Ssum·Kinv = Wᵀ·sW·W.
func (w *layerWork) prepareBsum() {
	if w.haveBsum {
		return
	}
	m := w.m
	w.tW = linalg.Resize(w.tW, m*m)
	w.bsum = linalg.Resize(w.bsum, m*m)
	mm(w.tW, m, m, m, w.lwT, false, w.sW, false, 1, 0)
	mm(w.bsum, m, m, m, w.tW, false, w.lw, false, 1, 0)
	linalg.Symmetrize(w.bsum, m)
	w.haveBsum = true
}

// prepareUncertain computes what a layer with an uncertain input needs
// besides: C = Bsum + A·Aᵀ and, with the gradient, the Ψ2 loop's weights
// g2 = scale/(2 s2)·(D·Kinv − C) = scale/(2 s2)·Wᵀ(D·I − sW − mW·mWᵀ)W,
// whitened because D·Kinv and C, ~cond(Kuu) times larger than their
// difference, cancel (precision_test.go: the last layer's inducing-input
// gradient 2.3e-4 → 6e-6).
func (w *layerWork) prepareUncertain(grad bool) {
	m, d := w.m, w.d
	mm2 := m * m
	w.prepareBsum()
	w.c = linalg.Resize(w.c, mm2)
	copy(w.c, w.bsum)
	mm(w.c, m, m, d, w.a, false, w.a, true, 1, 1)
	w.haveC = true
	if !grad {
		return
	}
	w.xW = linalg.Resize(w.xW, mm2)
	x := w.xW
	for i, v := range w.sW {
		x[i] = -v
	}
	mm(x, m, m, d, w.mW, false, w.mW, true, -1, 1)
	for i := 0; i < m; i++ {
		x[i*m+i] += float64(d)
	}
	w.g2 = linalg.Resize(w.g2, mm2)
	mm(w.tW, m, m, m, w.lwT, false, x, false, 1, 0)
	mm(w.g2, m, m, m, w.tW, false, w.lw, false, w.scale/(2*w.s2), 0)
	linalg.Symmetrize(w.g2, m)
}

// forwardMode selects what forward computes.
type forwardMode int

const (
	// fwdBound: the ψ statistics, the penalties and the output message.
	fwdBound forwardMode = iota
	// fwdMessages: the output message alone: no Ψ2 loop, no penalties
	// (left unset).
	fwdMessages
	// fwdStats: the ψ statistics and the penalties' sums without the
	// output message (and its likelihood), which depend on q(u): the
	// statistics from which the final layer's optimal q(u) is computed
	// (optimalFinalQ).
	fwdStats
)

// forward computes the layer's ψ statistics, penalties and output message
// for n data with input message (in, inVar), or a part of them (mode). The
// side tasks run in its data region (see parallel).
//
// lik, when not nil, is the last layer's likelihood to compute with the
// mean, chunk by chunk (likRows; likelihood then sums it): its y is set,
// forward sizes the rest.
func (e *Evaluator) forward(w *layerWork, n int, in, inVar []float64, grad, needVar bool, mode forwardMode, lik *likRows, side ...func()) {
	m, q, d := w.m, w.q, w.d
	messagesOnly, noMessage := mode == fwdMessages, mode == fwdStats
	if noMessage {
		needVar, lik = false, nil
	}
	w.in, w.inVar = in, inVar
	w.psi1 = linalg.Resize(w.psi1, n*m)
	w.comp = linalg.Resize(w.comp, n)
	w.prop = linalg.Resize(w.prop, n)
	if inVar != nil {
		w.psi0n = linalg.Resize(w.psi0n, n)
	}
	if !messagesOnly {
		w.v = linalg.Resize(w.v, n*m)
	}
	if inVar != nil {
		w.dIn = linalg.Resize(w.dIn, n*q)
		clear(w.dIn)
		w.dInVar = linalg.Resize(w.dInVar, n*q)
		clear(w.dInVar)
	} else {
		// A certain input (the data) has no gradient: no N×Q array
		// to clear (Frey's 1965 × 560).
		w.dIn, w.dInVar = nil, nil
	}
	chunks := numChunks(n)
	for len(w.accs) < chunks {
		w.accs = append(w.accs, nil)
	}
	var g2 []float64
	if grad {
		g2 = w.g2
	}
	if inVar != nil && !messagesOnly {
		if !w.haveC || (grad && len(w.g2) != m*m) {
			// Not prepared as an uncertain layer: the caller did not
			// say (LayerPosterior).
			w.prepareUncertain(grad)
			g2 = nil
			if grad {
				g2 = w.g2
			}
		}
		w.psi2.setWeights(g2, w.kinv, w.c)
		if mg, ok := w.psi2.(psi2Merger); ok {
			mg.setCompensated(w.compensate)
		}
		n := w.psi2.accLen()
		for c := 0; c < chunks; c++ {
			if a := w.accs[c]; a == nil || cap(a.buf) < n {
				w.accs[c] = &psi2Acc{buf: make([]float64, n)}
			} else {
				// The two passes of an optimal final q(u) differ in
				// length (no gradient sums in the first).
				a.buf = a.buf[:n]
				a.dirty = true // cleared by its chunk's task, in parallel
			}
		}
	}
	w.mean = linalg.Resize(w.mean, n*d)
	if lik != nil {
		lik.sq = linalg.Resize(lik.sq, chunks)
		lik.gMean, lik.done = nil, false
		lik.c = 1 / w.s2
		if grad {
			w.gMean = linalg.Resize(w.gMean, n*d)
			lik.gMean = w.gMean
			lik.c = w.scale / w.s2
		}
	}
	if !needVar {
		w.vr = nil
	} else {
		w.vr = linalg.Resize(w.vr, n*d)
		w.u = linalg.Resize(w.u, n*m*d)
		// U = Ψ1·Kinv·Lcat, all U_d = Ψ1·Kinv·L_d in one product.
		w.kLcat = linalg.Resize(w.kLcat, m*m*d)
		// Kinv·Lcat = Wᵀ(W·Lcat): through the explicit Kinv the messages'
		// variances of a badly conditioned layer lost ~cond(Kuu)·ε.
		w.wLcat = linalg.Resize(w.wLcat, m*m*d)
		mm(w.wLcat, m, m*d, m, w.lw, false, w.lcat, false, 1, 0)
		mm(w.kLcat, m, m*d, m, w.lwT, false, w.wLcat, false, 1, 0)
		w.kLcatT = linalg.Resize(w.kLcatT, m*m*d)
		transpose(w.kLcatT, w.kLcat, m, m*d, m*d)
	}
	iso, _ := w.kernel.(*RBFIso)
	if iso == nil || inVar != nil {
		iso = nil
		w.iso = nil
	} else {
		if w.iso == nil {
			w.iso = &isoRows{}
		}
		w.iso.prepare(w.z, m, q, n, chunks)
	}
	w.rowTmp = rowScratch(w.rowTmp, numChunks(n), rowScratchLen(q))
	e.parallel(n, func(chunk, lo, hi int) {
		if iso != nil {
			s := w.iso
			s.fast[chunk] = iso.psi1Rows(w.psi1[lo*m:hi*m], s.d2[lo*m:hi*m], s.xx[lo:hi], in[lo*q:hi*q], hi-lo, s)
		}
		if iso == nil || !w.iso.fast[chunk] {
			tmp := w.rowTmp[chunk]
			for i := lo; i < hi; i++ {
				var s []float64
				if inVar != nil {
					s = inVar[i*q : (i+1)*q]
				}
				w.kernel.psi1(w.psi1[i*m:(i+1)*m], in[i*q:(i+1)*q], s, w.z, tmp)
			}
		}
		if !noMessage {
			w.messageRows(lo, hi)
		}
		if lik != nil {
			lik.rows(chunk, lo, hi, d, w.mean)
		}
		if !messagesOnly {
			w.penaltyRows(w.accs[chunk], lo, hi)
		}
	}, side...)
	if lik != nil {
		lik.done = true
	}
	if inVar != nil && !messagesOnly {
		e.reduce(w.accs[:chunks], w.psi2)
		w.sumPsi2 = linalg.Resize(w.sumPsi2, m*m)
		w.sumPsi2Lo = linalg.Resize(w.sumPsi2Lo, m*m)
		if mg, ok := w.psi2.(psi2Merger); ok {
			mg.sum2(w.accs[0], w.sumPsi2, w.sumPsi2Lo)
		} else {
			w.psi2.sum(w.accs[0], w.sumPsi2)
			clear(w.sumPsi2Lo)
		}
	}
	if !messagesOnly {
		w.p11 = linalg.Resize(w.p11, m*m)
		w.p11W = linalg.Resize(w.p11W, m*m)
		e.productsTN(m, n, tnProduct{c: w.p11, cols: m, a: w.psi1, b: w.psi1, alpha: 1, sym: true},
			tnProduct{c: w.p11W, cols: m, a: w.v, b: w.v, alpha: 1, sym: true})
		w.penaltySums(n)
	}
}

// penaltySums sets the layer's sums of the penalties over the data from
// whitened matrices (W = L⁻¹, Kinv = WᵀW):
//
//	Σ_n tr(Kinv Ψ2_n)           = tr(W·ΣΨ2·Wᵀ)
//	Σ_n tr(C(Ψ2_n − ψ1_nᵀψ1_n)) = ⟨W·Ssum·Wᵀ + (W·m)(W·m)ᵀ, W·(ΣΨ2 − Ψ1ᵀΨ1)·Wᵀ⟩
//
// The per-datum loop weighs each Ψ2_n with Kinv and C, whose entries are
// ~cond(Kuu) times Kuu's, and their cancellation lost up to ~1e-5 of the
// bound at cond(Kuu) ≈ 1e7; the whitened matrices are of the size of the
// terms themselves. A certain input's compression is exact per datum
// (penaltyRows) and is summed.
func (w *layerWork) penaltySums(n int) {
	m := w.m
	w.p11W = linalg.Resize(w.p11W, m*m)

	if w.inVar == nil {
		var c float64
		for _, v := range w.comp[:n] {
			c += v
		}
		w.compSum, w.propSum = c, 0
		return
	}
	half := 1 / (2 * w.s2)
	// W·ΣΨ2·Wᵀ: its entries are up to ~cond(Kuu) times smaller than the
	// terms of the products, and where float64 products may lose more
	// than compensateAbove of it, it is formed from ΣΨ2's exact sum
	// hi + lo (rbfPsi2.sumExact) in compensated arithmetic (the fitted
	// robot model's middle layer, cond(Kuu) ≈ 5e7: with float64 products
	// tr(W·ΣΨ2·Wᵀ) was off by 1.4e-7, the bound by 2.8e-8).
	w.psi2W = linalg.Resize(w.psi2W, m*m)
	if !w.compensate {
		w.whiten(w.psi2W, w.sumPsi2, w.tmpW)
	} else {
		w.psi2WLo = linalg.Resize(w.psi2WLo, 2*m*m+m)
		whitenCompensated(w.psi2W, w.sumPsi2, w.sumPsi2Lo, w.lw, w.lwT, m, w.psi2WLo[:m*m], w.psi2WLo[m*m:2*m*m], w.psi2WLo[2*m*m:])
	}
	var psi0, tr float64
	for _, v := range w.psi0n[:n] {
		psi0 += v
	}
	for i := 0; i < m; i++ {
		tr += w.psi2W[i*m+i]
	}
	w.compSum = float64(w.d) * half * (psi0 - tr)
	// ⟨sW + mW·mWᵀ, psi2W − p11W⟩, the second factor into tmpW.
	for i := range w.tmpW {
		w.tmpW[i] = w.psi2W[i] - w.p11W[i]
	}
	var p float64
	for i := 0; i < m; i++ {
		mi := w.mW[i*w.d : (i+1)*w.d]
		for j := 0; j < m; j++ {
			p += (w.sW[i*m+j] + linalg.Dot(mi, w.mW[j*w.d:(j+1)*w.d])) * w.tmpW[i*m+j]
		}
	}
	w.propSum = half * p
}

// compensateAbove is the bound on W·x·Wᵀ's relative rounding error
// (whitenRoundoff) above which a layer sums ΣΨ2 from double-double
// entries and whitens it in compensated arithmetic: the fitted models' layers with
// cond(Kuu) ≳ 1e6 are at ~1e-10 and above, the benchmarks' random models
// at ~1e-12 and below.
const compensateAbove = 2e-11

// whitenRoundoff estimates the relative rounding error of a float64
// product W·x·Wᵀ (M×M, W lower triangular) for x a sum of products of
// kernel values, whose entries are ~max|Kuu| times W·x·Wᵀ's:
// ε·M·max|W|²·max|Kuu|.
func whitenRoundoff(w, kuu []float64) float64 {
	maxAbs := func(a []float64) float64 {
		var v float64
		for _, e := range a {
			v = max(v, math.Abs(e))
		}
		return v
	}
	m := math.Sqrt(float64(len(w)))
	mw := maxAbs(w)
	return 0x1p-53 * m * mw * mw * maxAbs(kuu)
}

// axpyCompensated adds (a + al)·(b + bl) to the running sums s + c, one
// entry per j: the product a·b exactly (TwoProduct by FMA), added by
// TwoSum, with its error, a·bl and al·b into c (bl may be nil: no low part).
func axpyCompensated(s, c []float64, a, al float64, b, bl []float64) {
	for j, bj := range b {
		p := a * bj
		pe := math.FMA(a, bj, -p)
		sj := s[j]
		t := sj + p
		z := t - sj
		e := (sj - (t - z)) + (p - z) + pe + al*bj
		if bl != nil {
			e += a * bl[j]
		}
		c[j] += e
		s[j] = t
	}
}

// whitenCompensated sets dst (M×M) to W·(hi + lo)·Wᵀ for symmetric hi +
// lo and lower triangular W (wT = Wᵀ), with every dot product of W and
// hi, and of the intermediate W·hi (kept as thi + tlo) and W, in
// compensated arithmetic (Ogita, Rump and Oishi's Dot2: TwoProduct by FMA,
// TwoSum), as accurate as if computed in twice the working precision. The
// loops run over a row of accumulators innermost, whose chains are
// independent. thi and tlo are M×M scratch, c M scratch.
func whitenCompensated(dst, hi, lo, w, wT []float64, m int, thi, tlo, c []float64) {
	// T = W·(hi + lo): row i of T is Σ_{k≤i} W_ik·(row k of hi + lo).
	for i := 0; i < m; i++ {
		ts, tc := thi[i*m:(i+1)*m], tlo[i*m:(i+1)*m]
		clear(ts)
		clear(tc)
		for k, a := range w[i*m : i*m+i+1] {
			axpyCompensated(ts, tc, a, 0, hi[k*m:(k+1)*m], lo[k*m:(k+1)*m])
		}
		for j, s := range ts {
			h := s + tc[j]
			ts[j], tc[j] = h, tc[j]-(h-s)
		}
	}
	// W·(hi + lo)·Wᵀ = T·Wᵀ: (T·Wᵀ)_ij = Σ_{k≤j} T_ik·W_jk, for j ≤ i,
	// mirrored.
	for i := 0; i < m; i++ {
		ti, tl := thi[i*m:(i+1)*m], tlo[i*m:(i+1)*m]
		ps, pc := dst[i*m:i*m+i+1], c[:i+1]
		clear(ps)
		clear(pc)
		for k := 0; k <= i; k++ {
			// W_jk for j = k…i
			axpyCompensated(ps[k:], pc[k:], ti[k], tl[k], wT[k*m+k:k*m+i+1], nil)
		}
		for j := range ps {
			v := ps[j] + pc[j]
			dst[i*m+j], dst[j*m+i] = v, v
		}
	}
}

// whiten sets dst (M×M) to W·x·Wᵀ; tmp is M×M scratch.
//
// With cond(Kuu) ≫ 1 the explicit Kinv's entries are ~cond(Kuu) times
// Kuu's, and a product through it loses that factor where the result is a
// difference of such entries (the bound's sums and the gradient w.r.t. Kuu,
// m and S at a fitted model); a product Kinv·x·Kinv formed as
// Wᵀ(W·x·Wᵀ)W keeps its intermediate of the size of x's whitened part.
// On fitted step models this took the error of the inducing inputs'
// gradient from 8e-2 to 1e-7 (precision_test.go).
func (w *layerWork) whiten(dst, x, tmp []float64) {
	m := w.m
	mm(tmp, m, m, m, w.lw, false, x, false, 1, 0)
	mm(dst, m, m, m, tmp, false, w.lwT, false, 1, 0)
}

// messageRows computes the output message of data lo…hi−1 from their ψ1:
// mean = Ψ1·A and, when w.vr is set, var_nd = s2 + ψ1 B_d ψ1ᵀ =
// s2 + ‖ψ1 Kinv L_d‖².
func (w *layerWork) messageRows(lo, hi int) {
	m, d, r := w.m, w.d, hi-lo
	p1 := w.psi1[lo*m : hi*m]
	mm(w.mean[lo*d:hi*d], r, d, m, p1, false, w.a, false, 1, 0)
	if w.vr == nil {
		return
	}
	mm(w.u[lo*m*d:hi*m*d], r, m*d, m, p1, false, w.kLcat, false, 1, 0)
	for i := lo * d; i < hi*d; i++ {
		row := w.u[i*m : (i+1)*m]
		w.vr[i] = w.s2 + linalg.Dot(row, row)
	}
}

// penaltyRows computes the compression and propagation terms of data
// lo…hi−1, and the Ψ2 loop's sums into acc.
func (w *layerWork) penaltyRows(acc *psi2Acc, lo, hi int) {
	if acc != nil && acc.dirty {
		acc.reset()
		acc.dirty = false
	}
	m, q, d := w.m, w.q, w.d
	half := 1 / (2 * w.s2)
	fd := float64(d)
	p1 := w.psi1[lo*m : hi*m]
	// The whitened ψ1: v_n = W ψ1_nᵀ, whose sums VᵀV give the likelihood's
	// trace and the propagation's ψ1 part (penaltySums) without the
	// cancellation that whitening the sum Ψ1ᵀΨ1 suffers.
	v := w.v[lo*m : hi*m]
	mm(v, hi-lo, m, m, p1, false, w.lwT, false, 1, 0)
	if w.inVar == nil {
		// ψ1 Kinv ψ1ᵀ = ‖v_n‖² for the chunk, into comp until it is used:
		// a sum of squares, where the quadratic form in the explicit Kinv
		// cancelled to ~cond(Kuu)·ε of ψ0.
		for i := lo; i < hi; i++ {
			row := w.v[i*m : (i+1)*m]
			w.comp[i] = linalg.Dot(row, row)
		}
		for i := lo; i < hi; i++ {
			w.comp[i] = fd * half * (w.kernel.psi0(w.in[i*q:(i+1)*q], nil) - w.comp[i])
			w.prop[i] = 0
		}
		return
	}
	// ψ1 C ψ1ᵀ for the chunk, into prop until it is used.
	quadRows(w.prop[lo:hi], p1, hi-lo, m, w.c)
	for i := lo; i < hi; i++ {
		mu, s := w.in[i*q:(i+1)*q], w.inVar[i*q:(i+1)*q]
		t1, t2 := w.psi2.datum(acc, mu, s, w.psi1[i*m:(i+1)*m], w.dIn[i*q:(i+1)*q], w.dInVar[i*q:(i+1)*q])
		p0 := w.kernel.psi0(mu, s)
		w.psi0n[i] = p0
		w.comp[i] = fd * half * (p0 - t1)
		w.prop[i] = half * (t2 - w.prop[i])
	}
}

// likelihood returns the expected log likelihood of y (N×D) under the last
// layer, scaled, and its gradient w.r.t. the layer's output mean.
//
// When the forward pass had lik (Evaluate's for the last layer), the
// residuals were summed and gMean written chunk by chunk as
// the mean was computed (likRows), in parallel and while the mean's rows
// were in the cache; else they are here.
func likelihood(w *layerWork, y []float64, n int, scale float64, grad bool, lr *likRows) (float64, []float64) {
	d := w.d
	w.y = y
	var sq float64
	var gMean []float64
	if lr != nil && lr.done && (lr.gMean != nil) == grad {
		for _, v := range lr.sq {
			sq += v
		}
		gMean = lr.gMean
		lr.done = false
	} else {
		if grad {
			w.gMean = linalg.Resize(w.gMean, n*d)
			gMean = w.gMean
		}
		sq = residuals(w.mean[:n*d], y[:n*d], gMean, scale/w.s2)
	}
	// Σ_n Σ_d ψ1_n B_d ψ1_nᵀ = tr(Bsum Ψ1ᵀΨ1) = ⟨W·Ssum·Wᵀ, W·Ψ1ᵀΨ1·Wᵀ⟩,
	// whitened as in penaltySums.
	tr := linalg.Dot(w.sW, w.p11W)
	lik := -0.5*float64(n*d)*math.Log(2*math.Pi*w.s2) - sq/(2*w.s2) - tr/(2*w.s2)
	w.likSq, w.likTr = sq, tr
	return scale * lik, gMean
}

// likRows is the last layer's likelihood, chunk by chunk in the forward
// pass: y the data, sq the chunks' sums of squared residuals, gMean (nil
// without the gradient) the gradient w.r.t. the mean, scaled by c.
type likRows struct {
	y, gMean []float64
	c        float64
	sq       []float64
	done     bool
}

// rows computes data lo…hi−1's residuals for chunk from the mean (N×D).
func (l *likRows) rows(chunk, lo, hi, d int, mean []float64) {
	var g []float64
	if l.gMean != nil {
		g = l.gMean[lo*d : hi*d]
	}
	l.sq[chunk] = residuals(mean[lo*d:hi*d], l.y[lo*d:hi*d], g, l.c)
}

// residuals returns Σ (y − mean)² and sets g = c·(y − mean) when g is not
// nil.
func residuals(mean, y, g []float64, c float64) float64 {
	y = y[:len(mean)]
	var sq float64
	if g == nil {
		for i, m := range mean {
			r := y[i] - m
			sq += r * r
		}
		return sq
	}
	g = g[:len(mean)]
	for i, m := range mean {
		r := y[i] - m
		sq += r * r
		g[i] = c * r
	}
	return sq
}

// arena hands out zeroed temporaries from one buffer that is reused across
// evaluations, so that an optimizer's loop does not churn the heap.
type arena struct {
	buf  []float64
	next int
	grow int // size that the buffer should have next time
}

// take returns a zeroed slice of length n. When the buffer is too small it
// allocates, and remembers to make the buffer large enough next time.
func (a *arena) take(n int) []float64 {
	if a.next == 0 && a.grow > len(a.buf) {
		a.buf = make([]float64, a.grow)
	}
	if a.next+n > len(a.buf) {
		a.grow = max(a.grow, a.next+n)
		a.next += n
		return make([]float64, n)
	}
	s := a.buf[a.next : a.next+n : a.next+n]
	a.next += n
	clear(s)
	return s
}
