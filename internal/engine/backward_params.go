package engine

import (
	"dgpviz/internal/linalg"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// paramGrads is what backward hands to paramGradient: the gradient
// w.r.t. the layer's intermediate quantities so far, and the number of
// chunk accumulators to reduce.
type paramGrads struct {
	chunks                  int
	dKinv, dBsum, dLcat, dA []float64
	dC, dKLcat              []float64 // nil when unused
	ds2                     float64
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
	dKinv, dBsum, dLcat, dA := pg.dKinv, pg.dBsum, pg.dLcat, pg.dA
	if pg.dKLcat != nil {
		// Kinv·Lcat.
		e.mmRows(dKinv, m, m, m*d, pg.dKLcat, w.lcatT, false, 1, 1)
		e.mmRows(dLcat, m, m*d, m, w.kinv, pg.dKLcat, false, 1, 0)
	}
	dZ := make([]float64, m*q)
	dTheta := make([]float64, w.kernel.NumParams())
	for c := 0; c < pg.chunks; c++ {
		addTo(dZ, w.baccs[c].dZ)
		addTo(dTheta, w.baccs[c].dParams)
	}
	if w.inVar != nil {
		w.psi2.finish(w.accs[0], dZ, dTheta)
		// C = A·Aᵀ + Bsum, with dC symmetric.
		mm(dA, m, d, m, pg.dC, false, w.a, false, 2, 1)
		addTo(dBsum, pg.dC)
	}

	// −KL = −½[tr(Kinv Ssum) + Σ_d m_dᵀ Kinv m_d − DM + D log|Kuu| − Σ_d log|S_d|].
	dQmu := make([]float64, m*d)
	dSsum := sc.take(mm2)
	for i := range dQmu {
		dQmu[i] = -w.a[i]
	}
	for i := range dSsum {
		dKinv[i] -= 0.5 * w.ssum[i]
	}
	mm(dKinv, m, m, d, w.qmu, false, w.qmu, true, -0.5, 1)

	// A = Kinv·m.
	mm(dKinv, m, m, d, dA, false, w.qmu, true, 1, 1)
	mm(dQmu, m, d, m, w.kinv, false, dA, false, 1, 1)

	// Bsum = Kinv·Ssum·Kinv, with Kinv·Ssum from prepare.
	mm(dKinv, m, m, m, dBsum, false, w.ks, false, 1, 1)
	mm(dKinv, m, m, m, w.ks, true, dBsum, false, 1, 1)
	// With the KL's −½·Kinv: dSsum = Wᵀ(W·dBsum·Wᵀ − ½I)W.
	tmp := sc.take(mm2)
	w.sandwich(dSsum, dBsum, tmp, -0.5, 1)

	// Ssum = Σ_d L_d L_dᵀ: dL_d += 2·dSsum·L_d, all D in one product with
	// Lcat (each L_d is stored with zeros above its diagonal).
	linalg.Symmetrize(dSsum, m)
	e.mmRows(dLcat, m, m*d, m, dSsum, w.lcat, false, 2, 1)
	dKuu := sc.take(mm2)
	var kuuDone sync.WaitGroup
	chainKuu := func() {
		// Kinv = Kuu⁻¹, and −½·D·log|Kuu|.
		w.sandwich(dKuu, dKinv, tmp, 0, -1)
		for i := range dKuu {
			dKuu[i] -= 0.5 * fd * w.kinv[i]
		}
		w.kernel.covGrad(w.z, m, w.kff, dKuu, dZ, dTheta)
	}
	if e.workers() > 1 && d*mm2 >= minParallelWork {
		kuuDone.Go(chainKuu)
	} else {
		chainKuu()
	}
	// The lower triangles, and +Σ_d log|S_d|/2 = Σ_d Σ_j log|L_d,jj|.
	qsqrt := make([]*mat.Dense, d)
	for k := range qsqrt {
		dl := make([]float64, mm2)
		for i := 0; i < m; i++ {
			copy(dl[i*m:i*m+i+1], dLcat[i*m*d+k*m:i*m*d+k*m+i+1])
			dl[i*m+i] += 1 / w.lcat[i*m*d+k*m+i]
		}
		qsqrt[k] = mat.NewDense(m, m, dl)
	}
	kuuDone.Wait()

	return LayerGradient{
		Kernel:         dTheta,
		NoiseVariance:  pg.ds2,
		InducingInputs: mat.NewDense(m, q, dZ),
		QMu:            mat.NewDense(m, d, dQmu),
		QSqrt:          qsqrt,
	}
}
