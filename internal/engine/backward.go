package engine

// backward turns the upstream gradient w.r.t. the layer's output message
// (gMean, gVar: N×D; gVar nil for the last layer, whose variance enters
// the bound only through the likelihood's trace term) into the gradient
// w.r.t. the layer's input message, left in w.dIn, w.dInVar, and returns
// the rest of the work: the gradient w.r.t. the layer's parameters, which
// the layer below does not need. The side tasks run in its data region
// (see parallel).
func (e *Evaluator) backward(w *layerWork, n int, gMean, gVar []float64, last bool, terms LayerTerms, side ...func()) (params func() LayerGradient) {
	m, q, d := w.m, w.q, w.d
	s2, scale, fd := w.s2, w.scale, float64(w.d)
	mm2 := m * m

	// Every term whose gradient w.r.t. ψ1_n is ψ1_n times a fixed M×M matrix
	// adds that matrix to wPsi1, and Ψ1ᵀΨ1 is formed once: both save
	// N·M² products per term.
	sc := &w.scratch
	sc.next = 0
	wPsi1 := sc.take(mm2)
	dKinvW := sc.take(mm2) // ∂/∂Kinv from the penalties, whitened: W·(·)·Wᵀ
	// ∂/∂Bsum, whitened: W·(·)·Wᵀ, assembled from the whitened sums
	// W·ΣΨ2·Wᵀ and VᵀV = W·Ψ1ᵀΨ1·Wᵀ. Whitening the float64 sums ΣΨ2 and
	// Ψ1ᵀΨ1 here instead lost ~cond(Kuu)·ε of the small whitened result.
	dBW := sc.take(mm2)
	dLcat := sc.take(m * m * d) // ∂/∂[L_1 … L_D]
	var ds2 float64

	// combined: the last layer's likelihood trace −Σ_n ψ1_n Bsum ψ1_nᵀ/(2 s2)
	// and propagation −Σ_n ψ1_n C ψ1_nᵀ/(2 s2) (C = Bsum + A·Aᵀ) are
	// differentiated together: w.r.t. ψ1 they give ψ1·A·Aᵀ/s2 and w.r.t.
	// Bsum −ΣΨ2/(2 s2), where apart their Bsum and Ψ1ᵀΨ1 parts, ~cond(Kuu)
	// times larger, cancel numerically.
	combined := last && w.inVar != nil
	// wPsi1Used: wPsi1 is not zero. gMeanPsi1 is the upstream gradient
	// w.r.t. the mean for ∂/∂ψ1 = gMeanPsi1·Aᵀ: gMean, plus, in the
	// combined case, the ψ1·A·Aᵀ/s2 = mean·Aᵀ/s2 above.
	//
	// gMean is the likelihood's scale·(y − mean)/s2, so that gMeanPsi1 =
	// gMean + scale/s2·mean is scale/s2·y: the product with Aᵀ takes y
	// and that factor (alphaPsi1) without forming it, nor the difference.
	wPsi1Used := !(w.inVar == nil && !last)
	gMeanPsi1, alphaPsi1 := gMean, 1.0
	if last {
		if combined {
			wPsi1Used = w.psi2.quadPsi1()
			gMeanPsi1, alphaPsi1 = w.y, scale/s2
			for i, v := range w.psi2W {
				dBW[i] = -scale / (2 * s2) * v
			}
		} else {
			w.prepareBsum()
			for i, v := range w.bsum {
				wPsi1[i] -= scale / s2 * v
				dBW[i] -= scale / (2 * s2) * w.p11W[i]
			}
		}
		ds2 += scale * (-float64(n*d)/(2*s2) + (w.likSq+w.likTr)/(2*s2*s2))
	}

	// Penalties. The Ψ2 part of their gradient was accumulated in forward.
	var dCW []float64 // ∂/∂C, whitened: W·(·)·Wᵀ
	if w.inVar == nil {
		// compression_n = D/(2 s2)·(ψ0_n − ‖v_n‖²), v_n = W ψ1_nᵀ; no
		// propagation. Its ψ1 gradient D/s2·v_n·W is added per chunk.
		for i, v := range w.p11W {
			dKinvW[i] += scale * fd / (2 * s2) * v
		}
	} else {
		dCW = sc.take(mm2)
		for i, v := range w.psi2W {
			if !combined {
				wPsi1[i] += scale / s2 * w.c[i]
			}
			dCW[i] = -scale / (2 * s2) * (v - w.p11W[i])
			dKinvW[i] += scale * fd / (2 * s2) * v
			if w.psi2.quadPsi1() {
				wPsi1[i] += 2 * w.g2[i]
			}
		}
	}
	ds2 += (terms.Compression + terms.Propagation) / s2

	// Per datum: ∂/∂ψ1_n from the message and the penalties, then ψ1 and ψ0
	// back to the input message, Z and the kernel.
	dPsi1 := sc.take(n * m)
	var dU []float64
	if !last {
		dU = sc.take(n * m * d)
	}
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
			a.ds2 = 0
		}
	}
	w.rowTmp = rowScratch(w.rowTmp, chunks, rowScratchLen(q))
	g0 := -scale * fd / (2 * s2)
	// whitened: a layer with an uncertain input forms ∂/∂ψ1_n as z_n·W,
	// z_n = α·gMean_n·(W·m)ᵀ + dU_n·(W·Lcat)ᵀ + scale/s2·v_n·(sW + mW·mWᵀ)
	// (A = Wᵀ(W·m), Kinv·Lcat = Wᵀ(W·Lcat), C = Wᵀ(sW + mW·mWᵀ)W), where
	// the products with the explicit A, Kinv·Lcat and C, whose entries are
	// ~cond(Kuu) times larger than their sum's, lost the kernel
	// parameters' gradient (precision_robot_test.go).
	whitened := w.inVar != nil && !w.psi2.quadPsi1()
	var sTilde []float64
	if whitened && wPsi1Used {
		sTilde = sc.take(mm2)
		copy(sTilde, w.sW)
		mm(sTilde, m, m, d, w.mW, false, w.mW, true, 1, 1)
	}
	e.parallel(n, func(chunk, lo, hi int) {
		acc := w.baccs[chunk]
		r := hi - lo
		dp := dPsi1[lo*m : hi*m]
		p1 := w.psi1[lo*m : hi*m]
		if !last {
			// var_nd = s2 + ‖U_d[n]‖² with U = Ψ1·Kinv·Lcat.
			for i := lo * d; i < hi*d; i++ {
				g := gVar[i]
				acc.ds2 += g
				for j := 0; j < m; j++ {
					dU[i*m+j] = 2 * g * w.u[i*m+j]
				}
			}
		}
		if whitened {
			zc := getScratch(r * m)
			z := *zc
			mm(z, r, m, d, gMeanPsi1[lo*d:hi*d], false, w.mW, true, alphaPsi1, 0)
			if !last {
				mm(z, r, m, m*d, dU[lo*m*d:hi*m*d], false, w.wLcat, true, 1, 1)
			}
			if wPsi1Used {
				mm(z, r, m, m, w.v[lo*m:hi*m], false, sTilde, false, scale/s2, 1)
			}
			mm(dp, r, m, m, z, false, w.lw, false, 1, 0)
			putScratch(zc)
		} else {
			// mean = Ψ1·A.
			mm(dp, r, m, d, gMeanPsi1[lo*d:hi*d], false, w.aT, false, alphaPsi1, 0)
			if !last {
				mm(dp, r, m, m*d, dU[lo*m*d:hi*m*d], false, w.kLcatT, false, 1, 1)
			}
			if wPsi1Used {
				mm(dp, r, m, m, p1, false, wPsi1, false, 1, 1)
			}
		}
		if w.inVar == nil {
			mm(dp, r, m, m, w.v[lo*m:hi*m], false, w.lw, false, scale*fd/s2, 1)
		}
		if w.iso != nil && w.iso.fast[chunk] {
			c := getScratch(r * m)
			w.kernel.(*RBFIso).psi1GradRows(dp, p1, w.iso.d2[lo*m:hi*m], w.in[lo*q:hi*q], r, w.z, g0, *c, acc.dZ, acc.dParams)
			putScratch(c)
			return
		}
		tmp := w.rowTmp[chunk]
		for i := lo; i < hi; i++ {
			mu := w.in[i*q : (i+1)*q]
			var s, dmu, ds []float64
			if w.inVar != nil {
				s, dmu, ds = w.inVar[i*q:(i+1)*q], w.dIn[i*q:(i+1)*q], w.dInVar[i*q:(i+1)*q]
			}
			w.kernel.psi1Grad(dPsi1[i*m:(i+1)*m], w.psi1[i*m:(i+1)*m], mu, s, w.z, dmu, ds, acc.dZ, acc.dParams, tmp)
			w.kernel.psi0Grad(g0, mu, s, dmu, ds, acc.dParams)
		}
	}, side...)
	// The sums over the data, whitened: W·∂/∂A = W·Ψ1ᵀ·gMean = Vᵀ·gMean
	// and W·∂/∂(Kinv·Lcat) = Vᵀ·dU with V = Ψ1·Wᵀ, whose rows are formed
	// per datum (penaltyRows): W times the float64 sum Ψ1ᵀ·(·) lost
	// ~cond(Kuu)·ε of it.
	dAW := sc.take(m * d)
	products := []tnProduct{{c: dAW, cols: d, a: w.v, b: gMean, alpha: 1}}
	var wdKL []float64 // W·∂/∂(Kinv·Lcat)
	if !last {
		wdKL = sc.take(m * m * d)
		products = append(products, tnProduct{c: wdKL, cols: m * d, a: w.v, b: dU, alpha: 1})
	}
	e.productsTN(m, n, products...)
	for c := 0; c < chunks; c++ {
		ds2 += w.baccs[c].ds2
	}
	pg := paramGrads{chunks: chunks, dKinvW: dKinvW, dBW: dBW, dLcat: dLcat, dAW: dAW, dCW: dCW, wdKL: wdKL, ds2: ds2, combined: combined}
	return func() LayerGradient { return e.paramGradient(w, &pg) }
}
