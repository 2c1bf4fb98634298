package engine

import (
	"sync"

	"dgpviz/internal/linalg"

	"gonum.org/v1/gonum/mat"
)

// paramGrads is what backward hands to paramGradient: the gradient
// w.r.t. the layer's intermediate quantities so far, and the number of
// chunk accumulators to reduce.
type paramGrads struct {
	chunks int
	dLcat  []float64
	// The gradient w.r.t. Bsum, A, Kinv, C and Kinv·Lcat, whitened:
	// dBW = W·dBsum·Wᵀ, dAW = W·dA, dKinvW = W·dKinv·Wᵀ, dCW = W·dC·Wᵀ,
	// wdKL = W·dKLcat.
	dBW, dAW, dKinvW []float64
	dCW, wdKL        []float64 // nil when unused
	ds2              float64
	combined         bool // dC's Bsum part is in dBW already
}

// paramGradient finishes the layer's backward pass: the chain from the
// intermediate quantities to the layer's parameters. It only reads the
// layer's workspace and its own scratch, so it may run while the layer
// below does its backward pass.
func (e *Evaluator) paramGradient(w *layerWork, pg *paramGrads) LayerGradient {
	m, q, d := w.m, w.q, w.d
	fd := float64(d)
	mm2 := m * m
	sc := &w.scratch
	kl := 1.0 // the weight of the KL's terms
	if w.noKLGrad {
		kl = 0
	}
	dBW, dLcat, dAW, wdKL := pg.dBW, pg.dLcat, pg.dAW, pg.wdKL
	// into: the gradient is added to it, and the temporaries come from the
	// scratch arena (a chunk of EvaluateChunked).
	into := w.gradInto
	alloc := func(n int) []float64 {
		if into != nil {
			return sc.take(n)
		}
		return make([]float64, n)
	}
	dZ := alloc(m * q)
	dTheta := alloc(w.kernel.NumParams())
	for c := 0; c < pg.chunks; c++ {
		addTo(dZ, w.baccs[c].dZ)
		addTo(dTheta, w.baccs[c].dParams)
	}
	if w.inVar != nil {
		w.psi2.finish(w.accs[0], dZ, dTheta)
		if ps, ok := w.psi2.(psi2ParamSums); ok {
			// tr(G·Y) = scale/(2 s2)·⟨X, W·Y·Wᵀ⟩ with G = w.g2 (prepareUncertain)
			yW, scr, hi, lo := sc.take(mm2), sc.take(2*mm2+m), sc.take(mm2), sc.take(mm2)
			ps.paramSums(w.accs[0], w.sumPsi2, w.sumPsi2Lo, hi, lo, func(hi, lo []float64) float64 {
				whitenCompensated(yW, hi, lo, w.lw, w.lwT, m, scr[:mm2], scr[mm2:2*mm2], scr[2*mm2:])
				return w.scale / (2 * w.s2) * linalg.Dot(w.xW, yW)
			}, dTheta)
		}
		// C = A·Aᵀ + Bsum, with dC symmetric: W·dA += 2·W·dC·A =
		// 2·(W·dC·Wᵀ)(W·m), and W·dBsum·Wᵀ += W·dC·Wᵀ.
		mm(dAW, m, d, m, pg.dCW, false, w.mW, false, 2, 1)
		if !pg.combined {
			addTo(dBW, pg.dCW)
		}
	}

	// The chain from Kinv, A = Kinv·m and Bsum = Kinv·Ssum·Kinv to Kuu, m
	// and Ssum, and the KL
	//   ½[tr(Kinv Ssum) + Σ_d m_dᵀ Kinv m_d − DM + D log|Kuu| − Σ_d log|S_d|],
	// all in whitened form (Kinv = WᵀW): see sandwich.
	// m: −Kinv·m from the KL and Kinv·dA from A, = Wᵀ(W·dA − W·m).
	dQmu := alloc(m * d)
	dm := sc.take(m * d)
	for i := range dm {
		dm[i] = dAW[i] - kl*w.mW[i]
	}
	mm(dQmu, m, d, m, w.lwT, false, dm, false, 1, 0)
	// Ssum = Σ_d L_d L_dᵀ with dSsum = Kinv·dBsum·Kinv − ½Kinv =
	// Wᵀ·X·W, X = W·dBsum·Wᵀ − ½I: dL_d = 2·dSsum·L_d, all D in one
	// product with Lcat. A layer below the last also has Kinv·Lcat =
	// Wᵀ(W·Lcat), which adds dLcat = Wᵀ(W·dKLcat) (its dKinv part,
	// (W·dKLcat)(W·Lcat)ᵀ, is in chainKuu): there dLcat = Wᵀ·Y with
	// Y = W·dKLcat + 2·X·(W·Lcat), two products with W·Lcat from forward
	// instead of three. (On the fitted fixtures both forms are equally
	// accurate; the last layer keeps the one product with Lcat, which has
	// D·M columns: 30 on the robot model, 560 on Frey.)
	x := sc.take(mm2)
	copy(x, dBW)
	linalg.Symmetrize(x, m)
	for i := 0; i < m; i++ {
		x[i*m+i] -= 0.5 * kl
	}
	if wdKL != nil {
		y := sc.take(m * m * d)
		copy(y, wdKL) // wdKL is needed in chainKuu too
		e.mmRows(y, m, m*d, m, x, w.wLcat, false, 2, 1)
		e.mmRows(dLcat, m, m*d, m, w.lwT, y, false, 1, 0)
	} else {
		dSsum := sc.take(mm2)
		tmp := sc.take(mm2)
		mm(tmp, m, m, m, w.lwT, false, x, false, 1, 0)
		mm(dSsum, m, m, m, tmp, false, w.lw, false, 1, 0)
		linalg.Symmetrize(dSsum, m)
		e.mmRows(dLcat, m, m*d, m, dSsum, w.lcat, false, 2, 0)
	}
	dKuu := sc.take(mm2)
	xk := sc.take(mm2)
	tmpK := sc.take(mm2)
	var kuuDone sync.WaitGroup
	chainKuu := func() {
		// dKuu = −Kinv·dKinv·Kinv − ½D·Kinv = −Wᵀ·X·W with
		// X = W·dKinv·Wᵀ + ½D·I, whose parts, whitened one by one:
		// Kinv·Lcat's (W·dKLcat)(W·Lcat)ᵀ; the penalties' (dKinvW); Bsum's
		// dBsum·Kinv·Ssum + Ssum·Kinv·dBsum
		// → dBW·sW + sW·dBW; A's dA·mᵀ → (W·dA)(W·m)ᵀ; the KL's
		// −½(Ssum + m·mᵀ) → −½(sW + mW·mWᵀ).
		clear(xk)
		if wdKL != nil {
			mm(xk, m, m, m*d, wdKL, false, w.wLcat, true, 1, 1)
		}
		addTo(xk, pg.dKinvW)
		// dBW·sW + sW·dBW = P + Pᵀ (both symmetric), and
		// (W·dA)(W·m)ᵀ − ½(W·m)(W·m)ᵀ = (W·dA − ½W·m)(W·m)ᵀ.
		mm(tmpK, m, m, m, dBW, false, w.sW, false, 1, 0)
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				xk[i*m+j] += tmpK[i*m+j] + tmpK[j*m+i] - 0.5*kl*w.sW[i*m+j]
			}
		}
		for i := range dm {
			dm[i] = dAW[i] - 0.5*kl*w.mW[i]
		}
		mm(xk, m, m, d, dm, false, w.mW, true, 1, 1)
		for i := 0; i < m; i++ {
			xk[i*m+i] += 0.5 * fd * kl
		}
		mm(tmpK, m, m, m, w.lwT, false, xk, false, 1, 0)
		mm(dKuu, m, m, m, tmpK, false, w.lw, false, -1, 0)
		w.kernel.covGrad(w.z, m, w.kff, dKuu, dZ, dTheta)
	}
	if e.workers() > 1 && d*mm2 >= minParallelWork {
		kuuDone.Go(chainKuu)
	} else {
		chainKuu()
	}
	// The lower triangles, and +Σ_d log|S_d|/2 = Σ_d Σ_j log|L_d,jj|.
	var qsqrt []*mat.Dense
	if into == nil {
		qsqrt = make([]*mat.Dense, d)
	}
	for k := range d {
		if into != nil {
			dl := into.QSqrt[k].RawMatrix().Data
			for i := 0; i < m; i++ {
				for j, v := range dLcat[i*m*d+k*m : i*m*d+k*m+i+1] {
					if j == i {
						v += kl / w.lcat[i*m*d+k*m+i]
					}
					dl[i*m+j] += v
				}
			}
			continue
		}
		dl := make([]float64, mm2)
		for i := 0; i < m; i++ {
			copy(dl[i*m:i*m+i+1], dLcat[i*m*d+k*m:i*m*d+k*m+i+1])
			dl[i*m+i] += kl / w.lcat[i*m*d+k*m+i]
		}
		qsqrt[k] = mat.NewDense(m, m, dl)
	}
	kuuDone.Wait()
	if into != nil {
		addTo(into.Kernel, dTheta)
		into.NoiseVariance += pg.ds2
		addTo(into.InducingInputs.RawMatrix().Data, dZ)
		addTo(into.QMu.RawMatrix().Data, dQmu)
		return *into
	}

	return LayerGradient{
		Kernel:         dTheta,
		NoiseVariance:  pg.ds2,
		InducingInputs: mat.NewDense(m, q, dZ),
		QMu:            mat.NewDense(m, d, dQmu),
		QSqrt:          qsqrt,
	}
}
