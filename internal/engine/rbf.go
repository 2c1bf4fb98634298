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
		dst[m] = pre * math.Exp(-e)
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

// rbfPsi2 holds the per-pair constants of Ψ2 for m ≤ m': the midpoint z̄
// and the exponent −Σ_q (z_mq − z_m'q)²/(4ℓ_q²), which do not depend on n.
type rbfPsi2 struct {
	k     *RBF
	m, q  int
	pairs []int32   // m·M+m' for each pair
	zbar  []float64 // pairs × Q
	ez    []float64 // pairs
	z     []float64
}

func (k *RBF) newPsi2(z []float64, m int) psi2Kernel {
	q := len(k.Lengthscales)
	np := m * (m + 1) / 2
	p := &rbfPsi2{k: k, m: m, q: q, pairs: make([]int32, 0, np), zbar: make([]float64, 0, np*q), ez: make([]float64, 0, np), z: z}
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			p.pairs = append(p.pairs, int32(i*m+j))
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

func (p *rbfPsi2) datum(acc *psi2Acc, g, w1, w2 []float64, mu, s, psi1 []float64, sum, dMu, dS []float64) (t1, t2 float64) {
	k, q, m := p.k, p.q, p.m
	var buf [24]float64
	a := scratch(buf[:], 3*q)
	inv, dmu, sq := a[:q], a[q:2*q], a[2*q:]
	pre := k.Variance * k.Variance
	for r, l := range k.Lengthscales {
		l2 := l * l
		inv[r] = 1 / (l2 + 2*s[r])
		pre /= math.Sqrt(1 + 2*s[r]/l2)
		dmu[r], sq[r] = 0, 0
	}
	var sc float64
	for pi, idx := range p.pairs {
		zb := p.zbar[pi*q : (pi+1)*q]
		e := p.ez[pi]
		for r := range inv {
			d := mu[r] - zb[r]
			e -= d * d * inv[r]
		}
		v := pre * math.Exp(e)
		i, j := int(idx)/m, int(idx)%m
		w := 1.0
		if i != j {
			w = 2
			sum[j*m+i] += v
		}
		sum[idx] += v
		t1 += w * w1[idx] * v
		t2 += w * w2[idx] * v
		if g == nil {
			continue
		}
		c := w * g[idx] * v
		if c == 0 {
			continue
		}
		sc += c
		acc.pair[idx] += c
		dzi := acc.dZ[i*q : (i+1)*q]
		dzj := acc.dZ[j*q : (j+1)*q]
		for r := range inv {
			d := mu[r] - zb[r]
			t := c * d * inv[r]
			dmu[r] -= 2 * t
			dzi[r] += t
			dzj[r] += t
			sq[r] += t * d * inv[r]
		}
	}
	if g == nil {
		return t1, t2
	}
	acc.dParams[0] += 2 * sc / k.Variance
	for r, l := range k.Lengthscales {
		dMu[r] += dmu[r]
		dS[r] += -sc*inv[r] + 2*sq[r]
		acc.dParams[1+r] += sc*(1/l-l*inv[r]) + 2*l*sq[r]
	}
	return t1, t2
}

func (p *rbfPsi2) finish(acc *psi2Acc, g []float64, dZ, dParams []float64) {
	q, m := p.q, p.m
	addTo(dZ, acc.dZ)
	addTo(dParams, acc.dParams)
	for _, idx := range p.pairs {
		c := acc.pair[idx]
		i, j := int(idx)/m, int(idx)%m
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
