package engine

import (
	"fmt"
	"math"
)

// RBF is the ARD exponentiated quadratic kernel
//
//	k(a, b) = Variance · exp(−½ Σ_q (a_q − b_q)² / Lengthscales_q²).
type RBF struct {
	Variance     float64
	Lengthscales []float64
}

// NewRBF returns an RBF kernel; it copies lengthscales.
func NewRBF(variance float64, lengthscales []float64) *RBF {
	return &RBF{Variance: variance, Lengthscales: append([]float64(nil), lengthscales...)}
}

func (k *RBF) Name() string      { return "rbf" }
func (k *RBF) InputDim() int     { return len(k.Lengthscales) }
func (k *RBF) NumParams() int    { return 1 + len(k.Lengthscales) }
func (k *RBF) Clone() Kernel     { return NewRBF(k.Variance, k.Lengthscales) }
func (k *RBF) Params() []float64 { return append([]float64{k.Variance}, k.Lengthscales...) }

func (k *RBF) SetParams(p []float64) {
	if len(p) != k.NumParams() {
		panic("engine: RBF.SetParams: wrong length")
	}
	k.Variance = p[0]
	copy(k.Lengthscales, p[1:])
}

func (k *RBF) ParamNames() []string {
	names := []string{"variance"}
	for q := range k.Lengthscales {
		names = append(names, fmt.Sprintf("lengthscales[%d]", q))
	}
	return names
}

func (k *RBF) Eval(a, b []float64) float64 {
	var e float64
	for q, l := range k.Lengthscales {
		d := (a[q] - b[q]) / l
		e += d * d
	}
	return k.Variance * math.Exp(-0.5*e)
}

func (k *RBF) covGrad(z []float64, m int, kuu, g []float64, dZ, dParams []float64) {
	q := len(k.Lengthscales)
	var sv float64
	for i := 0; i < m; i++ {
		zi := z[i*q : (i+1)*q]
		for j := 0; j < m; j++ {
			c := g[i*m+j] * kuu[i*m+j]
			if c == 0 {
				continue
			}
			sv += c
			zj := z[j*q : (j+1)*q]
			for r, l := range k.Lengthscales {
				d := zi[r] - zj[r]
				il2 := 1 / (l * l)
				dZ[i*q+r] -= c * d * il2
				dZ[j*q+r] += c * d * il2
				dParams[1+r] += c * d * d * il2 / l
			}
		}
	}
	dParams[0] += sv / k.Variance
}

func (k *RBF) psi0(mu, s []float64) float64 { return k.Variance }

func (k *RBF) psi0Grad(g float64, mu, s []float64, dMu, dS, dParams []float64) {
	dParams[0] += g
}

func (k *RBF) psi1(dst []float64, mu, s, z []float64) {
	q := len(k.Lengthscales)
	var buf [8]float64
	inv := scratch(buf[:], q)
	pre := k.Variance
	for r, l := range k.Lengthscales {
		l2 := l * l
		if s == nil {
			inv[r] = 0.5 / l2
			continue
		}
		inv[r] = 0.5 / (l2 + s[r])
		pre /= math.Sqrt(1 + s[r]/l2)
	}
	for m := range dst {
		zm := z[m*q : (m+1)*q]
		var e float64
		for r := range inv {
			d := mu[r] - zm[r]
			e += d * d * inv[r]
		}
		dst[m] = -e
	}
	expAll(dst)
	for m := range dst {
		dst[m] *= pre
	}
}

func (k *RBF) psi1Grad(g, psi1 []float64, mu, s, z []float64, dMu, dS, dZ, dParams []float64) {
	q := len(k.Lengthscales)
	var buf [16]float64
	a := scratch(buf[:], 2*q)
	inv, sq := a[:q], a[q:]
	for r, l := range k.Lengthscales {
		if s == nil {
			inv[r] = 1 / (l * l)
		} else {
			inv[r] = 1 / (l*l + s[r])
		}
		sq[r] = 0
	}
	var sc float64
	for m, gm := range g {
		c := gm * psi1[m]
		if c == 0 {
			continue
		}
		sc += c
		zm := z[m*q : (m+1)*q]
		dzm := dZ[m*q : (m+1)*q]
		for r := range inv {
			d := mu[r] - zm[r]
			t := c * d * inv[r]
			dzm[r] += t
			if dMu != nil {
				dMu[r] -= t
			}
			sq[r] += t * d * inv[r] // c d² a²
		}
	}
	dParams[0] += sc / k.Variance
	for r, l := range k.Lengthscales {
		// ∂/∂ℓ of −½log(ℓ²+s) + ½log ℓ² − d²/(2(ℓ²+s)).
		dParams[1+r] += sc*(1/l-l*inv[r]) + l*sq[r]
		if dS != nil {
			dS[r] += -0.5*sc*inv[r] + 0.5*sq[r]
		}
	}
}

// rbfPsi2 runs the Ψ2 loop over the pairs m ≤ m' only (Ψ2 is symmetric),
// with each pair's constants precomputed: the midpoint z̄ and the exponent
// −Σ_q (z_mq − z_m'q)²/(4ℓ_q²), which do not depend on the datum.
//
// Accumulator layout, P pairs: [Σ Ψ2 per pair (P) | Σ c·(μ−z̄)/(ℓ²+2s)
// per pair and dimension (P×Q) | ∂/∂θ (1+Q)], where c is a pair's
// contribution G·Ψ2 to tr(G Ψ2_n). Σ_n c per pair is G·ΣΨ2, found in
// finish.
type rbfPsi2 struct {
	k          *RBF
	m, q, np   int
	pi, pj     []int32
	zbar       []float64 // P×Q
	ez         []float64 // P
	z          []float64
	wg, w1, w2 []float64 // weights per pair, off-diagonal ones doubled
	grad       bool
}

func (k *RBF) newPsi2(z []float64, m int) psi2Kernel {
	q := len(k.Lengthscales)
	np := m * (m + 1) / 2
	p := &rbfPsi2{k: k, m: m, q: q, np: np, z: z,
		pi: make([]int32, 0, np), pj: make([]int32, 0, np),
		zbar: make([]float64, 0, np*q), ez: make([]float64, 0, np),
		wg: make([]float64, np), w1: make([]float64, np), w2: make([]float64, np)}
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			p.pi = append(p.pi, int32(i))
			p.pj = append(p.pj, int32(j))
			var e float64
			for r, l := range k.Lengthscales {
				d := z[i*q+r] - z[j*q+r]
				e -= d * d / (4 * l * l)
				p.zbar = append(p.zbar, 0.5*(z[i*q+r]+z[j*q+r]))
			}
			p.ez = append(p.ez, e)
		}
	}
	return p
}

func (p *rbfPsi2) quadPsi1() bool { return false }

func (p *rbfPsi2) setWeights(g, w1, w2 []float64) {
	p.grad = g != nil
	for k := range p.pi {
		i, j := int(p.pi[k]), int(p.pj[k])
		f := 2.0
		if i == j {
			f = 1
		}
		idx := i*p.m + j
		p.w1[k] = f * w1[idx]
		p.w2[k] = f * w2[idx]
		if p.grad {
			p.wg[k] = f * g[idx]
		}
	}
}

func (p *rbfPsi2) accLen() int { return p.np + p.np*p.q + 1 + p.q }

// datum runs in three passes over the pairs, each a tight loop: the
// exponents, their exponentials, and the sums.
func (p *rbfPsi2) datum(acc *psi2Acc, mu, s, psi1, dMu, dS []float64) (t1, t2 float64) {
	k, q, np := p.k, p.q, p.np
	buf := acc.buf
	sumP, zP, dPar := buf[:np], buf[np:np+np*q], buf[np+np*q:]
	ex := acc.scratch(np)
	var scr [32]float64
	a := scratch(scr[:], 4*q)
	inv, dmu, sq, dd := a[:q], a[q:2*q], a[2*q:3*q], a[3*q:]
	pre := k.Variance * k.Variance
	for r, l := range k.Lengthscales {
		l2 := l * l
		inv[r] = 1 / (l2 + 2*s[r])
		pre /= math.Sqrt(1 + 2*s[r]/l2)
		dmu[r], sq[r] = 0, 0
	}
	p.exponents(ex, mu, inv)
	expAll(ex)
	w1, w2, wg := p.w1[:np], p.w2[:np], p.wg[:np]
	for pi, e := range ex {
		v := pre * e
		ex[pi] = v
		sumP[pi] += v
		t1 += w1[pi] * v
		t2 += w2[pi] * v
	}
	if !p.grad {
		return t1, t2
	}
	// Per pair c = G·Ψ2 and e_r = c·(μ_r − z̄_r); the datum's sums
	// Σ c·e_r and Σ c·e_r² are scaled by (ℓ²+2s)⁻¹ once, after the loop.
	var sc float64
	switch q {
	case 1:
		mu0, inv0 := mu[0], inv[0]
		var dm0, s0 float64
		zbar := p.zbar[:np]
		zP := zP[:np]
		for pi, v := range ex {
			c := wg[pi] * v
			sc += c
			e0 := c * (mu0 - zbar[pi])
			dm0 += e0
			s0 += e0 * (mu0 - zbar[pi])
			zP[pi] += e0 * inv0
		}
		dmu[0], sq[0] = dm0, s0
	case 3:
		m0, m1, m2 := mu[0], mu[1], mu[2]
		i0, i1, i2 := inv[0], inv[1], inv[2]
		var dm0, dm1, dm2, s0, s1, s2 float64
		zbar := p.zbar[:3*np]
		zP := zP[:3*np]
		for pi, v := range ex {
			c := wg[pi] * v
			sc += c
			zb := zbar[3*pi : 3*pi+3 : 3*pi+3]
			d0, d1, d2 := m0-zb[0], m1-zb[1], m2-zb[2]
			e0, e1, e2 := c*d0, c*d1, c*d2
			dm0 += e0
			dm1 += e1
			dm2 += e2
			s0 += e0 * d0
			s1 += e1 * d1
			s2 += e2 * d2
			zp := zP[3*pi : 3*pi+3 : 3*pi+3]
			zp[0] += e0 * i0
			zp[1] += e1 * i1
			zp[2] += e2 * i2
		}
		dmu[0], dmu[1], dmu[2] = dm0, dm1, dm2
		sq[0], sq[1], sq[2] = s0, s1, s2
	default:
		for pi, v := range ex {
			c := wg[pi] * v
			sc += c
			zb := p.zbar[pi*q : (pi+1)*q]
			zp := zP[pi*q : (pi+1)*q]
			for r := range dd {
				d := mu[r] - zb[r]
				e := c * d
				dmu[r] += e
				sq[r] += e * d
				zp[r] += e * inv[r]
			}
		}
	}
	dPar[0] += 2 * sc / k.Variance
	for r, l := range k.Lengthscales {
		// The exponent's gradient w.r.t. μ_r is −2(μ_r − z̄_r)/(ℓ²+2s).
		dm, s2 := dmu[r]*inv[r], sq[r]*inv[r]*inv[r]
		dMu[r] -= 2 * dm
		dS[r] += -sc*inv[r] + 2*s2
		dPar[1+r] += sc*(1/l-l*inv[r]) + 2*l*s2
	}
	return t1, t2
}

// exponents sets ex[p] = ez_p − Σ_q (μ_q − z̄_pq)²·inv_q for every pair.
func (p *rbfPsi2) exponents(ex, mu, inv []float64) {
	q, np := p.q, p.np
	ez := p.ez[:np]
	switch q {
	case 1:
		mu0, inv0 := mu[0], inv[0]
		zbar := p.zbar[:np]
		for pi, e := range ez {
			d := mu0 - zbar[pi]
			ex[pi] = e - d*d*inv0
		}
	case 3:
		m0, m1, m2 := mu[0], mu[1], mu[2]
		i0, i1, i2 := inv[0], inv[1], inv[2]
		zbar := p.zbar[:3*np]
		for pi, e := range ez {
			zb := zbar[3*pi : 3*pi+3 : 3*pi+3]
			d0, d1, d2 := m0-zb[0], m1-zb[1], m2-zb[2]
			ex[pi] = e - d0*d0*i0 - d1*d1*i1 - d2*d2*i2
		}
	default:
		for pi, e := range ez {
			zb := p.zbar[pi*q : (pi+1)*q]
			for r, z := range zb {
				d := mu[r] - z
				e -= d * d * inv[r]
			}
			ex[pi] = e
		}
	}
}

func (p *rbfPsi2) sum(acc *psi2Acc, dst []float64) {
	m := p.m
	for k, v := range acc.buf[:p.np] {
		i, j := int(p.pi[k]), int(p.pj[k])
		dst[i*m+j] = v
		dst[j*m+i] = v
	}
}

func (p *rbfPsi2) finish(acc *psi2Acc, dZ, dParams []float64) {
	q, np := p.q, p.np
	buf := acc.buf
	sumP, zP := buf[:np], buf[np:np+np*q]
	addTo(dParams, buf[np+np*q:])
	for k := 0; k < np; k++ {
		i, j := int(p.pi[k]), int(p.pj[k])
		// z̄ = (z_m + z_m')/2 moves with both ends.
		for r := 0; r < q; r++ {
			dZ[i*q+r] += zP[k*q+r]
			dZ[j*q+r] += zP[k*q+r]
		}
		c := p.wg[k] * sumP[k]
		if c == 0 || i == j {
			continue
		}
		for r, l := range p.k.Lengthscales {
			d := p.z[i*q+r] - p.z[j*q+r]
			il2 := 1 / (l * l)
			dZ[i*q+r] -= 0.5 * c * d * il2
			dZ[j*q+r] += 0.5 * c * d * il2
			dParams[1+r] += 0.5 * c * d * d * il2 / l
		}
	}
}

// scratch returns buf[:n] when it fits, so that small dimensions need no
// allocation in hot loops, and a fresh slice otherwise.
func scratch(buf []float64, n int) []float64 {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]float64, n)
}
