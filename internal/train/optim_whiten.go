package train

import (
	"dgpviz/internal/engine"
	"dgpviz/internal/linalg"
	"fmt"
)

// The trainer optimises each layer's variational parameters in whitened
// coordinates (Hensman, Matthews & Ghahramani, 2015, §3; GPflow's
// "whiten"): m = Lk v and L_S = Lk W with Lk = chol(k(Z,Z) + jitter·I), so
// that a change of the kernel or of Z moves q(u) with the prior instead of
// against it. Without this the bound is very badly conditioned in (θ, Z)
// and L-BFGS needs tens of thousands of iterations. The model (and so the
// model file) keeps the natural parameters; only the optimizer's
// coordinates change. A group that is frozen stays fixed in its natural
// form, so it is not whitened.

// whiteLayer is one layer's place in the flat parameter vector and its
// whitening workspace.
type whiteLayer struct {
	off, np, mz, q, d int
	mu, s             bool // q_mu / q_sqrt whitened

	kff, lk    []float64 // k(Z,Z) and chol(k(Z,Z)+jitter·I), M×M
	a, b, c, e []float64 // M×M scratch
	gz, gk     []float64 // gradient accumulators for Z and the kernel
}

func (wl *whiteLayer) offZ() int  { return wl.off + wl.np + 1 }
func (wl *whiteLayer) offMu() int { return wl.offZ() + wl.mz*wl.q }
func (wl *whiteLayer) offS() int  { return wl.offMu() + wl.mz*wl.d }

// buildWhite lays out the whitening of every layer of the model.
func (t *Trainer) buildWhite() {
	t.white = t.white[:0]
	off := 0
	for i, l := range t.m.Layers {
		mz, q, d := l.Dims()
		// A final q(u) kept at its optimum is no coordinate of the
		// optimizer's: it stays natural.
		opt := t.optQ && i == len(t.m.Layers)-1
		wl := whiteLayer{off: off, np: l.Kernel.NumParams(), mz: mz, q: q, d: d,
			mu: !t.cfg.Frozen[engine.GroupQMu] && !opt, s: !t.cfg.Frozen[engine.GroupQSqrt] && !opt}
		mm2 := mz * mz
		wl.kff = make([]float64, mm2)
		wl.lk = make([]float64, mm2)
		wl.a = make([]float64, mm2)
		wl.b = make([]float64, mm2)
		wl.c = make([]float64, mm2)
		wl.e = make([]float64, mm2)
		wl.gz = make([]float64, mz*q)
		wl.gk = make([]float64, wl.np)
		t.white = append(t.white, wl)
		off = wl.offS() + d*mz*(mz+1)/2
	}
}

// factor computes k(Z,Z) and its Cholesky factor (with the model's jitter)
// for layer i, whose kernel and Z the model already holds.
func (t *Trainer) factor(i int) error {
	wl := &t.white[i]
	l := t.m.Layers[i]
	z := l.InducingInputs.RawMatrix()
	var zs []float64
	if z.Stride == wl.q {
		zs = z.Data[:wl.mz*wl.q]
	} else {
		zs = linalg.Flatten(nil, l.InducingInputs)
	}
	engine.Cov(l.Kernel, wl.kff, zs, zs)
	copy(wl.lk, wl.kff)
	for k := 0; k < wl.mz; k++ {
		wl.lk[k*wl.mz+k] += t.m.Jitter
	}
	if !linalg.Cholesky(wl.lk, wl.lk, wl.mz) {
		return fmt.Errorf("%w with jitter %g (layer %d)", engine.ErrNotPositiveDefinite, t.m.Jitter, i)
	}
	return nil
}

// whiten converts the model's natural parameters nat into the optimizer's
// coordinates w (same layout).
func (t *Trainer) whiten(nat, w []float64) error {
	copy(w, nat)
	for i := range t.white {
		wl := &t.white[i]
		if !wl.mu && !wl.s {
			continue
		}
		if err := t.factor(i); err != nil {
			return err
		}
		m, d := wl.mz, wl.d
		if wl.mu {
			// v = Lk⁻¹ m.
			o := wl.offMu()
			solveColumns(wl.lk, m, d, w[o:], nat[o:], wl.a)
		}
		if wl.s {
			// W_d = Lk⁻¹ L_d (lower triangular).
			o := wl.offS()
			for k := 0; k < d; k++ {
				ls := o + k*m*(m+1)/2
				unpackLower(wl.b, nat[ls:], m)
				solveColumns(wl.lk, m, m, wl.b, wl.b, wl.a)
				packLower(w[ls:], wl.b, m)
			}
		}
	}
	return nil
}

// unwhiten sets the model from the optimizer's coordinates w, writing the
// natural parameters into nat.
func (t *Trainer) unwhiten(w, nat []float64) error {
	copy(nat, w)
	t.m.SetParams(nat) // kernels and Z (q_mu and q_sqrt are set below)
	for i := range t.white {
		wl := &t.white[i]
		if !wl.mu && !wl.s {
			continue
		}
		if err := t.factor(i); err != nil {
			return err
		}
		m, d := wl.mz, wl.d
		if wl.mu {
			o := wl.offMu()
			for r := 0; r < m; r++ {
				for k := 0; k < d; k++ {
					var s float64
					for c := 0; c <= r; c++ {
						s += wl.lk[r*m+c] * w[o+c*d+k]
					}
					nat[o+r*d+k] = s
				}
			}
		}
		if wl.s {
			o := wl.offS()
			for k := 0; k < d; k++ {
				ls := o + k*m*(m+1)/2
				unpackLower(wl.b, w[ls:], m)
				lowerMul(wl.a, wl.lk, wl.b, m)
				packLower(nat[ls:], wl.a, m)
			}
		}
	}
	t.m.SetParams(nat)
	return nil
}

// whiteGrad converts g, the gradient w.r.t. the natural parameters, in
// place into the gradient w.r.t. the whitened coordinates w, by the chain
// rule through m = Lk v, L_S = Lk W and Lk = chol(k(Z,Z) + jitter·I)
// (Murray, 2016, for the Cholesky factor). It needs the factors from the
// last unwhiten.
func (t *Trainer) whiteGrad(w, g []float64) {
	for i := range t.white {
		wl := &t.white[i]
		if !wl.mu && !wl.s {
			continue
		}
		m, d := wl.mz, wl.d
		lbar := wl.c // L̄k = lower(Σ_d g_m,d v_dᵀ + g_L,d W_dᵀ)
		clear(lbar)
		if wl.mu {
			o := wl.offMu()
			for r := 0; r < m; r++ {
				for c := 0; c <= r; c++ {
					var s float64
					for k := 0; k < d; k++ {
						s += g[o+r*d+k] * w[o+c*d+k]
					}
					lbar[r*m+c] += s
				}
			}
			// g_v = Lkᵀ g_m.
			for k := 0; k < d; k++ {
				for r := 0; r < m; r++ {
					var s float64
					for c := r; c < m; c++ {
						s += wl.lk[c*m+r] * g[o+c*d+k]
					}
					wl.a[r] = s
				}
				for r := 0; r < m; r++ {
					g[o+r*d+k] = wl.a[r]
				}
			}
		}
		if wl.s {
			o := wl.offS()
			for k := 0; k < d; k++ {
				ls := o + k*m*(m+1)/2
				unpackLower(wl.a, g[ls:], m) // g_L
				unpackLower(wl.b, w[ls:], m) // W
				for r := 0; r < m; r++ {
					for c := 0; c <= r; c++ {
						var s float64
						for j := 0; j <= c; j++ { // W[c][j] = 0 for j > c
							s += wl.a[r*m+j] * wl.b[c*m+j]
						}
						lbar[r*m+c] += s
					}
				}
				// g_W = lower(Lkᵀ g_L).
				for r := 0; r < m; r++ {
					for c := 0; c <= r; c++ {
						var s float64
						for j := r; j < m; j++ {
							s += wl.lk[j*m+r] * wl.a[j*m+c]
						}
						wl.e[r*m+c] = s
					}
				}
				packLower(g[ls:], wl.e, m)
			}
		}
		// Ā = Lk⁻ᵀ sym(Φ(Lkᵀ L̄)) Lk⁻¹, Φ = lower triangle, diagonal halved.
		p := wl.a
		for r := 0; r < m; r++ {
			for c := 0; c <= r; c++ {
				var s float64
				for j := r; j < m; j++ {
					s += wl.lk[j*m+r] * lbar[j*m+c]
				}
				p[r*m+c] = s
			}
		}
		for r := 0; r < m; r++ {
			p[r*m+r] *= 0.5
			for c := 0; c < r; c++ {
				v := 0.5 * p[r*m+c]
				p[r*m+c], p[c*m+r] = v, v
			}
		}
		// X = Lk⁻ᵀ P, then Ā = (Lk⁻ᵀ Xᵀ)ᵀ.
		for c := 0; c < m; c++ {
			for r := 0; r < m; r++ {
				wl.e[r] = p[r*m+c]
			}
			linalg.BackSolveT(wl.lk, m, wl.e[:m])
			for r := 0; r < m; r++ {
				wl.b[c*m+r] = wl.e[r] // b = Xᵀ
			}
		}
		for c := 0; c < m; c++ {
			for r := 0; r < m; r++ {
				wl.e[r] = wl.b[r*m+c]
			}
			linalg.BackSolveT(wl.lk, m, wl.e[:m])
			for r := 0; r < m; r++ {
				p[c*m+r] = wl.e[r] // p = Ā (Ā is symmetric)
			}
		}
		linalg.Symmetrize(p, m)
		clear(wl.gz)
		clear(wl.gk)
		l := t.m.Layers[i]
		zs := linalg.Flatten(wl.b, l.InducingInputs)
		engine.CovGrad(l.Kernel, zs, m, wl.kff, p, wl.gz, wl.gk)
		for j, v := range wl.gk {
			g[wl.off+j] += v
		}
		oz := wl.offZ()
		for j, v := range wl.gz {
			g[oz+j] += v
		}
	}
}

// solveColumns sets dst to L⁻¹·src for the row-major m×cols src and dst
// (they may be the same) and L lower triangular, column by column through
// tmp (length ≥ m).
func solveColumns(l []float64, m, cols int, dst, src, tmp []float64) {
	for c := 0; c < cols; c++ {
		for r := 0; r < m; r++ {
			tmp[r] = src[r*cols+c]
		}
		linalg.ForwardSolve(l, m, tmp[:m])
		for r := 0; r < m; r++ {
			dst[r*cols+c] = tmp[r]
		}
	}
}

// lowerMul writes c = a·b for lower triangular a, b (M×M, row-major).
func lowerMul(c, a, b []float64, m int) {
	for r := 0; r < m; r++ {
		for col := 0; col < m; col++ {
			if col > r {
				c[r*m+col] = 0
				continue
			}
			var s float64
			for k := col; k <= r; k++ {
				s += a[r*m+k] * b[k*m+col]
			}
			c[r*m+col] = s
		}
	}
}

// unpackLower writes the packed lower triangle v (row by row) into the full
// M×M matrix a, with zeros above the diagonal.
func unpackLower(a, v []float64, m int) {
	k := 0
	for r := 0; r < m; r++ {
		for c := 0; c < m; c++ {
			if c <= r {
				a[r*m+c] = v[k]
				k++
			} else {
				a[r*m+c] = 0
			}
		}
	}
}

// packLower writes the lower triangle of a (M×M) row by row into v.
func packLower(v, a []float64, m int) {
	k := 0
	for r := 0; r < m; r++ {
		for c := 0; c <= r; c++ {
			v[k] = a[r*m+c]
			k++
		}
	}
}
