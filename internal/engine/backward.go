package engine

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// backward turns the upstream gradient w.r.t. the layer's output message
// (gMean, gVar: N×D; gVar nil for the last layer, whose variance enters
// the bound only through the likelihood's trace term) into the gradient
// w.r.t. the layer's parameters, and leaves the gradient w.r.t. the
// layer's input message in w.dIn, w.dInVar.
func (e *Evaluator) backward(w *layerWork, l *Layer, n int, gMean, gVar []float64, last bool, terms LayerTerms) LayerGradient {
	m, q, d := w.m, w.q, w.d
	s2, scale, fd := w.s2, w.scale, float64(w.d)
	mm2 := m * m

	// Every term whose gradient w.r.t. ψ1_n is ψ1_n times a fixed M×M matrix
	// adds that matrix to wPsi1, and Ψ1ᵀΨ1 is formed once: both save
	// N·M² products per term.
	sc := &w.scratch
	sc.next = 0
	p11 := w.p11
	wPsi1 := sc.take(mm2)
	dKinv := sc.take(mm2)
	dBsum := sc.take(mm2)
	dLcat := sc.take(m * m * d) // ∂/∂[L_1 … L_D]
	var ds2 float64

	// mean = Ψ1·A.
	dPsi1 := sc.take(n * m)
	mm(dPsi1, n, m, d, gMean, false, w.a, true, 1, 0)
	dA := sc.take(m * d)
	mm(dA, m, d, n, w.psi1, true, gMean, false, 1, 0)

	if last {
		// The likelihood's −Σ_n ψ1_n Bsum ψ1_nᵀ/(2 s2).
		for i, v := range w.bsum {
			wPsi1[i] -= scale / s2 * v
			dBsum[i] -= scale / (2 * s2) * p11[i]
		}
		ds2 += scale * (-float64(n*d)/(2*s2) + (w.likSq+w.likTr)/(2*s2*s2))
	} else {
		// var_nd = s2 + ‖U_d[n]‖² with U_d = T·L_d and T = Ψ1·Kinv.
		dU := sc.take(n * m * d)
		for i, g := range gVar[:n*d] {
			ds2 += g
			for j := 0; j < m; j++ {
				dU[i*m+j] = 2 * g * w.u[i*m+j]
			}
		}
		dT := sc.take(n * m)
		mm(dT, n, m, m*d, dU, false, w.lcat, true, 1, 0)
		mm(dLcat, m, m*d, n, w.t, true, dU, false, 1, 0)
		mm(dPsi1, n, m, m, dT, false, w.kinv, false, 1, 1)
		mm(dKinv, m, m, n, w.psi1, true, dT, false, 1, 1)
	}

	// Penalties. The Ψ2 part of their gradient was accumulated in forward.
	var dC []float64
	if w.inVar == nil {
		// compression_n = D/(2 s2)·(ψ0_n − ψ1_n Kinv ψ1_nᵀ); no propagation.
		for i, v := range w.kinv {
			wPsi1[i] += scale * fd / s2 * v
			dKinv[i] += scale * fd / (2 * s2) * p11[i]
		}
	} else {
		dC = sc.take(mm2)
		for i, v := range w.sumPsi2 {
			wPsi1[i] += scale / s2 * w.c[i]
			dC[i] = -scale / (2 * s2) * (v - p11[i])
			dKinv[i] += scale * fd / (2 * s2) * v
			if w.psi2.quadPsi1() {
				wPsi1[i] += 2 * w.g2[i]
			}
		}
	}
	mm(dPsi1, n, m, m, w.psi1, false, wPsi1, false, 1, 1)
	ds2 += (terms.Compression + terms.Propagation) / s2

	// Per datum: ψ1 and ψ0 back to the input message, Z and the kernel.
	np := w.kernel.NumParams()
	chunks := numChunks(n)
	for len(w.baccs) < chunks {
		w.baccs = append(w.baccs, nil)
	}
	for c := 0; c < chunks; c++ {
		if a := w.baccs[c]; a == nil || len(a.dZ) != m*q || len(a.dParams) != np {
			w.baccs[c] = &gradAcc{dZ: make([]float64, m*q), dParams: make([]float64, np)}
		} else {
			clear(a.dZ)
			clear(a.dParams)
		}
	}
	g0 := -scale * fd / (2 * s2)
	e.parallel(n, func(chunk, lo, hi int) {
		acc := w.baccs[chunk]
		for i := lo; i < hi; i++ {
			mu := w.in[i*q : (i+1)*q]
			var s, dmu, ds []float64
			if w.inVar != nil {
				s, dmu, ds = w.inVar[i*q:(i+1)*q], w.dIn[i*q:(i+1)*q], w.dInVar[i*q:(i+1)*q]
			}
			w.kernel.psi1Grad(dPsi1[i*m:(i+1)*m], w.psi1[i*m:(i+1)*m], mu, s, w.z, dmu, ds, acc.dZ, acc.dParams)
			w.kernel.psi0Grad(g0, mu, s, dmu, ds, acc.dParams)
		}
	})
	dZ := make([]float64, m*q)
	dTheta := make([]float64, np)
	for c := 0; c < chunks; c++ {
		addTo(dZ, w.baccs[c].dZ)
		addTo(dTheta, w.baccs[c].dParams)
	}
	if w.inVar != nil {
		w.psi2.finish(w.accs[0], dZ, dTheta)
		// C = A·Aᵀ + Bsum, with dC symmetric.
		mm(dA, m, d, m, dC, false, w.a, false, 2, 1)
		addTo(dBsum, dC)
	}

	// −KL = −½[tr(Kinv Ssum) + Σ_d m_dᵀ Kinv m_d − DM + D log|Kuu| − Σ_d log|S_d|].
	dQmu := make([]float64, m*d)
	dSsum := sc.take(mm2)
	for i := range dQmu {
		dQmu[i] = -w.a[i]
	}
	for i := range dSsum {
		dKinv[i] -= 0.5 * w.ssum[i]
		dSsum[i] = -0.5 * w.kinv[i]
	}
	mm(dKinv, m, m, d, w.qmu, false, w.qmu, true, -0.5, 1)

	// A = Kinv·m.
	mm(dKinv, m, m, d, dA, false, w.qmu, true, 1, 1)
	mm(dQmu, m, d, m, w.kinv, false, dA, false, 1, 1)

	// Bsum = Kinv·Ssum·Kinv.
	ks := sc.take(mm2)
	mm(ks, m, m, m, w.kinv, false, w.ssum, false, 1, 0)
	mm(dKinv, m, m, m, dBsum, false, ks, false, 1, 1)
	mm(dKinv, m, m, m, ks, true, dBsum, false, 1, 1)
	tmp := sc.take(mm2)
	mm(tmp, m, m, m, w.kinv, false, dBsum, false, 1, 0)
	mm(dSsum, m, m, m, tmp, false, w.kinv, false, 1, 1)

	// Ssum = Σ_d L_d L_dᵀ, and +Σ_d log|S_d|/2 = Σ_d Σ_j log|L_d,jj|.
	symmetrize(dSsum, m)
	// dL_d += 2·dSsum·L_d, a triangular product per output.
	tri := sc.take(mm2)
	for k := 0; k < d; k++ {
		for i := range tri {
			tri[i] = 2 * dSsum[i]
		}
		blas64.Implementation().Dtrmm(blas.Right, blas.Lower, blas.NoTrans, blas.NonUnit, m, m, 1, w.lcat[k*m:], m*d, tri, m)
		for i := 0; i < m; i++ {
			addTo(dLcat[i*m*d+k*m:i*m*d+k*m+i+1], tri[i*m:i*m+i+1])
		}
	}
	qsqrt := make([]*mat.Dense, d)
	for k := range qsqrt {
		dl := make([]float64, mm2)
		for i := 0; i < m; i++ {
			src := dLcat[i*m*d+k*m : i*m*d+k*m+i+1]
			copy(dl[i*m:], src)
			dl[i*m+i] += 1 / w.lcat[i*m*d+k*m+i]
		}
		qsqrt[k] = mat.NewDense(m, m, dl)
	}

	// Kinv = Kuu⁻¹, and −½·D·log|Kuu|.
	mm(tmp, m, m, m, w.kinv, false, dKinv, false, 1, 0)
	dKuu := sc.take(mm2)
	mm(dKuu, m, m, m, tmp, false, w.kinv, false, -1, 0)
	for i := range dKuu {
		dKuu[i] -= 0.5 * fd * w.kinv[i]
	}
	w.kernel.covGrad(w.z, m, w.kff, dKuu, dZ, dTheta)

	return LayerGradient{
		Kernel:         dTheta,
		NoiseVariance:  ds2,
		InducingInputs: mat.NewDense(m, q, dZ),
		QMu:            mat.NewDense(m, d, dQmu),
		QSqrt:          qsqrt,
	}
}
