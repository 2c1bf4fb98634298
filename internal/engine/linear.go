package engine

import "fmt"

// Linear is the ARD linear kernel k(a, b) = Σ_q Variances_q a_q b_q.
type Linear struct {
	Variances []float64
}

// NewLinear returns a linear kernel; it copies variances.
func NewLinear(variances []float64) *Linear {
	return &Linear{Variances: append([]float64(nil), variances...)}
}

func (k *Linear) Name() string      { return "linear" }
func (k *Linear) InputDim() int     { return len(k.Variances) }
func (k *Linear) NumParams() int    { return len(k.Variances) }
func (k *Linear) Clone() Kernel     { return NewLinear(k.Variances) }
func (k *Linear) Params() []float64 { return append([]float64(nil), k.Variances...) }

func (k *Linear) SetParams(p []float64) {
	if len(p) != len(k.Variances) {
		panic("engine: Linear.SetParams: wrong length")
	}
	copy(k.Variances, p)
}

func (k *Linear) ParamNames() []string {
	names := make([]string, len(k.Variances))
	for q := range names {
		names[q] = fmt.Sprintf("variances[%d]", q)
	}
	return names
}

func (k *Linear) Eval(a, b []float64) float64 {
	var s float64
	for q, v := range k.Variances {
		s += v * a[q] * b[q]
	}
	return s
}

func (k *Linear) covGrad(z []float64, m int, kuu, g []float64, dZ, dParams []float64) {
	q := len(k.Variances)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			c := g[i*m+j]
			if c == 0 {
				continue
			}
			for r, v := range k.Variances {
				dParams[r] += c * z[i*q+r] * z[j*q+r]
				dZ[i*q+r] += c * v * z[j*q+r]
				dZ[j*q+r] += c * v * z[i*q+r]
			}
		}
	}
}

func (k *Linear) psi0(mu, s []float64) float64 {
	var p float64
	for q, v := range k.Variances {
		p += v * mu[q] * mu[q]
		if s != nil {
			p += v * s[q]
		}
	}
	return p
}

func (k *Linear) psi0Grad(g float64, mu, s []float64, dMu, dS, dParams []float64) {
	for q, v := range k.Variances {
		e := mu[q] * mu[q]
		if s != nil {
			e += s[q]
			dS[q] += g * v
		}
		dParams[q] += g * e
		if dMu != nil {
			dMu[q] += 2 * g * v * mu[q]
		}
	}
}

func (k *Linear) psi1(dst []float64, mu, s, z, _ []float64) {
	q := len(k.Variances)
	for m := range dst {
		dst[m] = k.Eval(mu, z[m*q:(m+1)*q])
	}
}

func (k *Linear) psi1Grad(g, psi1 []float64, mu, s, z []float64, dMu, dS, dZ, dParams, _ []float64) {
	q := len(k.Variances)
	for m, c := range g {
		if c == 0 {
			continue
		}
		for r, v := range k.Variances {
			dParams[r] += c * mu[r] * z[m*q+r]
			dZ[m*q+r] += c * v * mu[r]
			if dMu != nil {
				dMu[r] += c * v * z[m*q+r]
			}
		}
	}
}

// linearPsi2 uses Ψ2_n = ψ1_nᵀψ1_n + Σ_q v_q² s_nq z_q z_qᵀ, where z_q is
// column q of Z. Accumulator layout: [Σ Ψ2 (M×M) | Σ_n s_nq (Q)].
type linearPsi2 struct {
	k             *Linear
	m, q          int
	z             []float64
	g, w1, w2     []float64
	zgz, zw1, zw2 []float64 // z_qᵀ W z_q per q
}

func (k *Linear) newPsi2(z []float64, m int, old psi2Kernel) psi2Kernel {
	q := len(k.Variances)
	return &linearPsi2{k: k, m: m, q: q, z: z, zgz: make([]float64, q), zw1: make([]float64, q), zw2: make([]float64, q)}
}

func (p *linearPsi2) quadPsi1() bool { return true }

func (p *linearPsi2) setWeights(g, w1, w2 []float64) {
	p.g, p.w1, p.w2 = g, w1, w2
	for r := 0; r < p.q; r++ {
		p.zw1[r] = p.zwz(w1, r)
		p.zw2[r] = p.zwz(w2, r)
		if g != nil {
			p.zgz[r] = p.zwz(g, r)
		}
	}
}

func (p *linearPsi2) accLen() int { return p.m*p.m + p.q }

// zwz returns z_qᵀ W z_q.
func (p *linearPsi2) zwz(w []float64, r int) float64 {
	m, q := p.m, p.q
	var t float64
	for i := 0; i < m; i++ {
		var row float64
		for j := 0; j < m; j++ {
			row += w[i*m+j] * p.z[j*q+r]
		}
		t += p.z[i*q+r] * row
	}
	return t
}

func (p *linearPsi2) datum(acc *psi2Acc, mu, s, psi1, dMu, dS []float64) (t1, t2 float64) {
	m, q := p.m, p.q
	sum, svec := acc.buf[:m*m], acc.buf[m*m:]
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			v := psi1[i] * psi1[j]
			for r, vr := range p.k.Variances {
				v += vr * vr * s[r] * p.z[i*q+r] * p.z[j*q+r]
			}
			sum[i*m+j] += v
		}
	}
	t1, t2 = quad(psi1, p.w1), quad(psi1, p.w2)
	for r, vr := range p.k.Variances {
		t1 += vr * vr * s[r] * p.zw1[r]
		t2 += vr * vr * s[r] * p.zw2[r]
		svec[r] += s[r]
		if p.g != nil {
			dS[r] += vr * vr * p.zgz[r]
		}
	}
	return t1, t2
}

func (p *linearPsi2) sum(acc *psi2Acc, dst []float64) {
	copy(dst, acc.buf[:p.m*p.m])
}

func (p *linearPsi2) finish(acc *psi2Acc, dZ, dParams []float64) {
	m, q := p.m, p.q
	svec := acc.buf[m*m:]
	for r, vr := range p.k.Variances {
		sr := svec[r]
		if sr == 0 {
			continue
		}
		dParams[r] += 2 * vr * sr * p.zgz[r]
		for i := 0; i < m; i++ {
			var row float64
			for j := 0; j < m; j++ {
				row += p.g[i*m+j] * p.z[j*q+r]
			}
			dZ[i*q+r] += 2 * vr * vr * sr * row
		}
	}
}
