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

func (k *Linear) psi1(dst []float64, mu, s, z []float64) {
	q := len(k.Variances)
	for m := range dst {
		dst[m] = k.Eval(mu, z[m*q:(m+1)*q])
	}
}

func (k *Linear) psi1Grad(g, psi1 []float64, mu, s, z []float64, dMu, dS, dZ, dParams []float64) {
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
// column q of Z. acc.vec sums s_nq over the chunk.
type linearPsi2 struct {
	k    *Linear
	m, q int
	z    []float64
}

func (k *Linear) newPsi2(z []float64, m int) psi2Kernel {
	return &linearPsi2{k: k, m: m, q: len(k.Variances), z: z}
}

func (p *linearPsi2) quadPsi1() bool { return true }

// zwz returns z_qᵀ W z_q.
func (p *linearPsi2) zwz(w []float64, r int) float64 {
	m, q := p.m, p.q
	var t float64
	for i := 0; i < m; i++ {
		zi := p.z[i*q+r]
		if zi == 0 {
			continue
		}
		var row float64
		for j := 0; j < m; j++ {
			row += w[i*m+j] * p.z[j*q+r]
		}
		t += zi * row
	}
	return t
}

func (p *linearPsi2) datum(acc *psi2Acc, g, w1, w2 []float64, mu, s, psi1 []float64, sum, dMu, dS []float64) (t1, t2 float64) {
	m, q := p.m, p.q
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			v := psi1[i] * psi1[j]
			for r, vr := range p.k.Variances {
				v += vr * vr * s[r] * p.z[i*q+r] * p.z[j*q+r]
			}
			sum[i*m+j] += v
			t1 += w1[i*m+j] * v
			t2 += w2[i*m+j] * v
		}
	}
	if g == nil {
		return t1, t2
	}
	for r, vr := range p.k.Variances {
		dS[r] += vr * vr * p.zwz(g, r)
		acc.vec[r] += s[r]
	}
	return t1, t2
}

func (p *linearPsi2) finish(acc *psi2Acc, g []float64, dZ, dParams []float64) {
	m, q := p.m, p.q
	for r, vr := range p.k.Variances {
		sr := acc.vec[r]
		if sr == 0 {
			continue
		}
		dParams[r] += 2 * vr * sr * p.zwz(g, r)
		for i := 0; i < m; i++ {
			var row float64
			for j := 0; j < m; j++ {
				row += g[i*m+j] * p.z[j*q+r]
			}
			dZ[i*q+r] += 2 * vr * vr * sr * row
		}
	}
}
