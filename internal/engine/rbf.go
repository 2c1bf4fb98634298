package engine

import (
	"fmt"
	"math"

	"dgpviz/internal/linalg"
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

// cov is Cov for the RBF kernel: the exponents first, then their
// exponentials in one expAll.
func (k *RBF) cov(dst, a, b []float64) {
	q := len(k.Lengthscales)
	var buf [8]float64
	inv := scratch(buf[:], q)
	for r, l := range k.Lengthscales {
		inv[r] = 0.5 / (l * l)
	}
	nb := len(b) / q
	for i := range len(a) / q {
		ai := a[i*q : (i+1)*q]
		row := dst[i*nb : (i+1)*nb]
		for j := range row {
			bj := b[j*q : (j+1)*q]
			var e float64
			for r, iv := range inv {
				d := ai[r] - bj[r]
				e += d * d * iv
			}
			row[j] = -e
		}
	}
	expAll(dst)
	for i := range dst {
		dst[i] *= k.Variance
	}
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

func (k *RBF) psi1(dst []float64, mu, s, z, tmp []float64) {
	q := len(k.Lengthscales)
	inv := scratch(tmp, q)
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

func (k *RBF) psi1Grad(g, psi1 []float64, mu, s, z []float64, dMu, dS, dZ, dParams, tmp []float64) {
	q := len(k.Lengthscales)
	a := scratch(tmp, 2*q)
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
// The pairs are stored in blocks of four, each block holding every
// quantity of its pairs side by side (rows of four), so that the
// assembly kernels walk one pointer and load whole vectors. The last
// block is padded with pairs whose exponent is −Inf and weights 0: they
// add exact zeros. tab, per block: [ez | w1 | w2 | wg | z̄_0 … z̄_{Q−1}],
// the weights with off-diagonal pairs doubled.
//
// Accumulator layout: blocks of [Σ Ψ2 | lo | zP_0 … zP_{Q−1}] per pair,
// where lo is the low part of ΣΨ2 when it is summed exactly (the sum is
// ΣΨ2 + lo, see sumExact; else lo is 0), zP_q = Σ c·(μ_q−z̄_q)/(ℓ_q²+2s_q)
// and c is a pair's contribution G·Ψ2 to tr(G Ψ2_n), then ∂/∂θ (1+Q), and
// where the kernel parameters' part is exact (exactParams), from extOff
// the hi and lo of Σ_n ∂Ψ2_n/∂ℓ_r per pair and dimension.
// Σ_n c per pair is G·ΣΨ2, found in finish.
//
// ΣΨ2 is summed exactly where W·ΣΨ2·Wᵀ (W = L⁻¹, Kuu = LLᵀ) would lose
// to float64 what its uses need (setCompensated): its small entries are
// differences of ~cond(Kuu) times larger ones, and a float64 Ψ2 entry's
// own rounding, amplified so, cost the last layer's q_sqrt gradient
// 9.6e-5 of its scale on a fitted step3 model (cond(Kuu) ≈ 7e6) even with
// the sum compensated (precision_test.go).
type rbfPsi2 struct {
	k        *RBF
	m, q, np int
	blocks   int
	pi, pj   []int32
	z        []float64
	tab      []float64
	grad     bool
	exact    bool // sum ΣΨ2 from double-double entries (setCompensated)
	// The pairs' exponent constants and midpoints in double-double, for
	// sumExact: ez per pair, z̄ per pair and dimension, and ∂ez/∂ℓ_r =
	// (z_mr − z_m'r)²/(2ℓ_r³) per pair and dimension.
	ezDD, zbarDD, ezDer []dd
}

// Rows of a block of rbfPsi2.tab.
const (
	rowEz = iota
	rowW1
	rowW2
	rowWg
	rowZbar // the first of Q
)

// at is the index in tab of a pair's entry in a row.
func (p *rbfPsi2) at(row, pair int) int { return (pair>>2)*4*(rowZbar+p.q) + row*4 + pair&3 }

// accAt is the index in an accumulator of a pair's entry in a row
// (0: ΣΨ2, 1: its low part, 2+q: zP_q).
func (p *rbfPsi2) accAt(row, pair int) int { return (pair>>2)*4*(2+p.q) + row*4 + pair&3 }

func (k *RBF) newPsi2(z []float64, m int, old psi2Kernel) psi2Kernel {
	q := len(k.Lengthscales)
	np := m * (m + 1) / 2
	nb := (np + 3) / 4
	p, _ := old.(*rbfPsi2)
	if p == nil {
		p = new(rbfPsi2)
	}
	*p = rbfPsi2{k: k, m: m, q: q, np: np, blocks: nb, z: z,
		pi: p.pi[:0], pj: p.pj[:0], tab: linalg.Resize(p.tab, nb*4*(rowZbar+q)),
		ezDD: resizeDD(p.ezDD, np), zbarDD: resizeDD(p.zbarDD, np*q), ezDer: resizeDD(p.ezDer, np*q)}
	clear(p.tab)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			pair := len(p.pi)
			p.pi = append(p.pi, int32(i))
			p.pj = append(p.pj, int32(j))
			var e float64
			var ed dd
			for r, l := range k.Lengthscales {
				d := z[i*q+r] - z[j*q+r]
				e -= d * d / (4 * l * l)
				p.tab[p.at(rowZbar+r, pair)] = 0.5 * (z[i*q+r] + z[j*q+r])
				// the same in double-double: z_i ± z_j exactly, halved exactly
				dh, dl := twoSum(z[i*q+r], -z[j*q+r])
				dz := dd{dh, dl}
				l2h, l2l := twoProd(2*l, 2*l)
				dz2 := ddMul(dz, dz)
				ed = ddAdd(ed, ddNeg(ddDiv(dz2, dd{l2h, l2l})))
				p.ezDer[pair*q+r] = ddDiv(dz2, ddMulF(dd{l2h, l2l}, 0.5*l)) // (2ℓ)²·ℓ/2 = 2ℓ³
				sh, sl := twoSum(z[i*q+r], z[j*q+r])
				p.zbarDD[pair*q+r] = dd{0.5 * sh, 0.5 * sl}
			}
			p.tab[p.at(rowEz, pair)] = e
			p.ezDD[pair] = ed
		}
	}
	for pair := np; pair < 4*nb; pair++ {
		p.tab[p.at(rowEz, pair)] = math.Inf(-1)
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
		p.tab[p.at(rowW1, k)] = f * w1[idx]
		p.tab[p.at(rowW2, k)] = f * w2[idx]
		p.tab[p.at(rowWg, k)] = 0
		if p.grad {
			p.tab[p.at(rowWg, k)] = f * g[idx]
		}
	}
}

func (p *rbfPsi2) accLen() int {
	if p.exactParams() {
		return p.extOff() + 2*p.np*p.q
	}
	return p.blocks*4*(2+p.q) + 1 + p.q
}

// extOff is where an accumulator's exact sums of ∂Ψ2/∂ℓ_r start (after
// the blocks and ∂/∂θ; even, so that reduce's segments never split one's
// hi and lo): hi, lo per pair and dimension (sumExact).
func (p *rbfPsi2) extOff() int { n := p.blocks*4*(2+p.q) + 1 + p.q; return n + n&1 }

// exactParams reports whether the Ψ2 part of the kernel parameters'
// gradient comes from the exact sums (paramSums) rather than the loop's
// float64 weights.
func (p *rbfPsi2) exactParams() bool { return p.exact && p.grad }

// datum runs the pair loop for one datum: in assembly where the CPU has
// AVX2 and FMA, otherwise in pairsGo.
func (p *rbfPsi2) datum(acc *psi2Acc, mu, s, psi1, dMu, dS []float64) (t1, t2 float64) {
	k, q := p.k, p.q
	buf := acc.buf
	dPar := buf[p.blocks*4*(2+q):]
	a := acc.rowFloats(3*q + pairsSIMDLen(q))
	inv, dmu, sq := a[:q], a[q:2*q], a[2*q:3*q]
	pre := k.Variance * k.Variance
	for r, l := range k.Lengthscales {
		l2 := l * l
		inv[r] = 1 / (l2 + 2*s[r])
		pre /= math.Sqrt(1 + 2*s[r]/l2)
	}
	// Per pair c = G·Ψ2 and e_r = c·(μ_r − z̄_r); the datum's sums
	// Σ c·e_r and Σ c·e_r² are scaled by (ℓ²+2s)⁻¹ once, after the loop.
	var sc float64
	if useSIMD {
		t1, t2, sc = p.pairsSIMD(acc.buf, mu, inv, pre, dmu, sq, a[3*q:])
	} else {
		t1, t2, sc = p.pairsGo(acc, mu, inv, pre, dmu, sq)
	}
	if p.exact {
		p.sumExact(acc, mu, s)
	}
	if !p.grad {
		return t1, t2
	}
	exact := p.exactParams() // then paramSums has the kernel parameters' part
	if !exact {
		dPar[0] += 2 * sc / k.Variance
	}
	for r, l := range k.Lengthscales {
		// The exponent's gradient w.r.t. μ_r is −2(μ_r − z̄_r)/(ℓ²+2s).
		dm, s2 := dmu[r]*inv[r], sq[r]*inv[r]*inv[r]
		dMu[r] -= 2 * dm
		dS[r] += -sc*inv[r] + 2*s2
		if !exact {
			dPar[1+r] += sc*(1/l-l*inv[r]) + 2*l*s2
		}
	}
	return t1, t2
}

// pairsSIMD is the pair loop in assembly. It returns Σ w1·Ψ2, Σ w2·Ψ2 and
// Σ c over the pairs and sets dmu_r = Σ c·(μ_r − z̄_r) and
// sq_r = Σ c·(μ_r − z̄_r)²; the kernels keep four partial sums of each,
// added here in a fixed order. tmp is scratch of pairsSIMDLen(Q) floats:
// the kernels' parameters and their output lanes.
func (p *rbfPsi2) pairsSIMD(acc, mu, inv []float64, pre float64, dmu, sq, tmp []float64) (t1, t2, sc float64) {
	q := p.q
	par, lanes := tmp[:4+8*q], tmp[4+8*q:pairsSIMDLen(q)]
	for l := range 4 {
		par[l] = pre
		for r := range q {
			par[4+8*r+l], par[8+8*r+l] = mu[r], inv[r]
		}
	}
	if q <= 3 {
		psi2Pairs3AVX2(&p.tab[0], &acc[0], &par[0], &lanes[0], p.blocks, q, p.grad, !p.exact)
	} else {
		clear(lanes)
		psi2PairsAVX2(&p.tab[0], &acc[0], &par[0], &lanes[0], p.blocks, q, p.grad, !p.exact)
	}
	for r := range q {
		dmu[r], sq[r] = sum4(lanes[12+8*r:16+8*r]), sum4(lanes[16+8*r:20+8*r])
	}
	return sum4(lanes[0:4]), sum4(lanes[4:8]), sum4(lanes[8:12])
}

// pairsGo is pairsSIMD in Go, in passes over the blocks: the exponents,
// their exponentials (one long loop), the sums and, with the gradient,
// one pass per input dimension.
func (p *rbfPsi2) pairsGo(acc *psi2Acc, mu, inv []float64, pre float64, dmu, sq []float64) (t1, t2, sc float64) {
	q := p.q
	tw, aw := 4*(rowZbar+q), 4*(2+q)
	ex := acc.scratch(4 * p.blocks)
	for b := range p.blocks {
		tb := p.tab[b*tw : (b+1)*tw]
		e0, e1, e2, e3 := tb[0], tb[1], tb[2], tb[3]
		for r, m := range mu {
			zb := tb[4*(rowZbar+r) : 4*(rowZbar+r)+4 : 4*(rowZbar+r)+4]
			iv := inv[r]
			d0, d1, d2, d3 := m-zb[0], m-zb[1], m-zb[2], m-zb[3]
			e0 -= d0 * d0 * iv
			e1 -= d1 * d1 * iv
			e2 -= d2 * d2 * iv
			e3 -= d3 * d3 * iv
		}
		e := ex[4*b : 4*b+4 : 4*b+4]
		e[0], e[1], e[2], e[3] = e0, e1, e2, e3
	}
	expAllGo(ex)
	buf := acc.buf
	// Ψ2 per pair, then c = G·Ψ2 in its place.
	for b := range p.blocks {
		tb := p.tab[b*tw : b*tw+4*rowZbar : b*tw+4*rowZbar]
		ab := buf[b*aw : b*aw+8 : b*aw+8]
		e := ex[4*b : 4*b+4 : 4*b+4]
		v0, v1, v2, v3 := pre*e[0], pre*e[1], pre*e[2], pre*e[3]
		if !p.exact { // else sumExact sums them
			ab[0] += v0
			ab[1] += v1
			ab[2] += v2
			ab[3] += v3
		}
		t1 += tb[4]*v0 + tb[5]*v1 + tb[6]*v2 + tb[7]*v3
		t2 += tb[8]*v0 + tb[9]*v1 + tb[10]*v2 + tb[11]*v3
		e[0], e[1], e[2], e[3] = tb[12]*v0, tb[13]*v1, tb[14]*v2, tb[15]*v3
		sc += e[0] + e[1] + e[2] + e[3]
	}
	if !p.grad {
		return t1, t2, 0
	}
	if q == 3 {
		// The robot model's hidden layers: the three dimensions in one
		// pass, with constant offsets.
		m0, m1, m2 := mu[0], mu[1], mu[2]
		i0, i1, i2 := inv[0], inv[1], inv[2]
		var dm0, dm1, dm2, s0, s1, s2 float64
		for b := range p.blocks {
			zb := p.tab[b*28+16 : b*28+28 : b*28+28]
			zp := buf[b*20+8 : b*20+20 : b*20+20]
			c := ex[4*b : 4*b+4 : 4*b+4]
			for l := range 4 {
				d0, d1, d2 := m0-zb[l], m1-zb[4+l], m2-zb[8+l]
				e0, e1, e2 := c[l]*d0, c[l]*d1, c[l]*d2
				dm0 += e0
				dm1 += e1
				dm2 += e2
				s0 += e0 * d0
				s1 += e1 * d1
				s2 += e2 * d2
				zp[l] += e0 * i0
				zp[4+l] += e1 * i1
				zp[8+l] += e2 * i2
			}
		}
		dmu[0], dmu[1], dmu[2] = dm0, dm1, dm2
		sq[0], sq[1], sq[2] = s0, s1, s2
		return t1, t2, sc
	}
	for r, m := range mu {
		iv := inv[r]
		zo, ao := 4*(rowZbar+r), 4*(2+r)
		var dm, s float64
		for b := range p.blocks {
			zb := p.tab[b*tw+zo : b*tw+zo+4 : b*tw+zo+4]
			zp := buf[b*aw+ao : b*aw+ao+4 : b*aw+ao+4]
			c := ex[4*b : 4*b+4 : 4*b+4]
			for l := range 4 {
				d := m - zb[l]
				e := c[l] * d
				dm += e
				s += e * d
				zp[l] += e * iv
			}
		}
		dmu[r], sq[r] = dm, s
	}
	return t1, t2, sc
}

// pairsSIMDLen is the length of pairsSIMD's scratch: par, 4 + 8Q, and
// lanes, 12 + 8·max(Q, 3).
func pairsSIMDLen(q int) int { return 4 + 8*q + 12 + 8*max(q, 3) }

// sum4 adds four lanes in a fixed order.
func sum4(l []float64) float64 { return (l[0] + l[1]) + (l[2] + l[3]) }

func (p *rbfPsi2) sum(acc *psi2Acc, dst []float64) {
	p.sum2(acc, dst, nil)
}

// sum2 writes Σ_n Ψ2_n as hi + lo, hi = fl(hi + lo) (lo may be nil).
func (p *rbfPsi2) sum2(acc *psi2Acc, hi, lo []float64) {
	m := p.m
	for k := range p.pi {
		h, l := twoSum(acc.buf[p.accAt(0, k)], acc.buf[p.accAt(1, k)])
		i, j := int(p.pi[k]), int(p.pj[k])
		hi[i*m+j], hi[j*m+i] = h, h
		if lo != nil {
			lo[i*m+j], lo[j*m+i] = l, l
		}
	}
}

// twoSum returns fl(a + b) and its rounding error (Knuth).
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

func (p *rbfPsi2) blockLen() int { return 4 * (2 + p.q) }

// setCompensated selects the exact summation of ΣΨ2 (sumExact; the
// accumulators keep their layout, with the low parts 0 without it).
func (p *rbfPsi2) setCompensated(c bool) { p.exact = c }

// merge adds src into dst, both a part of an accumulator starting at
// offset off, a multiple of blockLen: ΣΨ2 with its low part (the chunks'
// sums are as large as the total, and a plain addition would lose what
// the exact summation kept), the rest plainly.
func (p *rbfPsi2) merge(dst, src []float64, off int) {
	bl := p.blockLen()
	end := min(len(dst), p.blocks*bl-off)
	for b := 0; b < end; b += bl {
		for l := range 4 {
			s, e := twoSum(dst[b+l], src[b+l])
			dst[b+l] = s
			dst[b+4+l] += src[b+4+l] + e
		}
		addTo(dst[b+8:b+bl], src[b+8:b+bl])
	}
	if end < 0 {
		end = 0
	}
	if !p.exactParams() {
		addTo(dst[end:], src[end:])
		return
	}
	ext := max(end, min(len(dst), p.extOff()-off))
	addTo(dst[end:ext], src[end:ext])
	for i := ext; i+1 < len(dst); i += 2 { // hi, lo (extOff and off even)
		s, e := twoSum(dst[i], src[i])
		dst[i] = s
		dst[i+1] += src[i+1] + e
	}
}

func (p *rbfPsi2) finish(acc *psi2Acc, dZ, dParams []float64) {
	q, np := p.q, p.np
	exact := p.exactParams() // then paramSums has the kernel parameters' part
	buf := acc.buf
	addTo(dParams, buf[p.blocks*4*(2+q):p.blocks*4*(2+q)+1+q])
	for k := 0; k < np; k++ {
		i, j := int(p.pi[k]), int(p.pj[k])
		// z̄ = (z_m + z_m')/2 moves with both ends.
		for r := 0; r < q; r++ {
			zp := buf[p.accAt(2+r, k)]
			dZ[i*q+r] += zp
			dZ[j*q+r] += zp
		}
		c := p.tab[p.at(rowWg, k)] * buf[p.accAt(0, k)]
		if c == 0 || i == j {
			continue
		}
		for r, l := range p.k.Lengthscales {
			d := p.z[i*q+r] - p.z[j*q+r]
			il2 := 1 / (l * l)
			dZ[i*q+r] -= 0.5 * c * d * il2
			dZ[j*q+r] += 0.5 * c * d * il2
			if !exact {
				dParams[1+r] += 0.5 * c * d * d * il2 / l
			}
		}
	}
}

// sumExact adds the datum's Ψ2 entries to ΣΨ2 as double-double numbers
// (accurate to ~1e-21 each, where float64 entries carry up to an ulp,
// 1.1e-16), into the accumulator's ΣΨ2 and low part by TwoSum:
//
//	Ψ2_mm' = pre · exp(ez − Σ_r (μ_r − z̄_r)²/(ℓ_r² + 2s_r)),
//	pre = σ⁴ ∏_r (1 + 2s_r/ℓ_r²)^(−½).
//
// An entry below e^exactTailExp·pre is added in float64: its rounding,
// below 2e-24·pre, counts no more than a double-double entry's. The pairs' Ψ2 in
// float64 still serve the loop's other sums (the per-datum penalties and
// the gradient's weights), where no whitening amplifies their rounding.
func (p *rbfPsi2) sumExact(ac *psi2Acc, mu, s []float64) {
	q := p.q
	acc := ac.buf
	// per dimension: inv = 1/(ℓ² + 2s); with the gradient, ∂ log Ψ2/∂ℓ's
	// terms a = 2s/(ℓ(ℓ² + 2s)) and b = 2ℓ/(ℓ² + 2s)² (times (μ − z̄)²);
	// and per pair the (μ − z̄)² of each dimension
	buf := ac.rowDDs(4 * q)
	inv, a, b, sq := buf[0:0:q], buf[q:q:2*q], buf[2*q:2*q:3*q], buf[3*q:4*q]
	v2 := p.k.Variance
	ph, pl := twoProd(v2, v2)
	pre := dd{ph, pl}
	for r, l := range p.k.Lengthscales {
		// u = ℓ² + 2s; pre·= ℓ/√u
		l2h, l2l := twoProd(l, l)
		u := ddAdd(dd{l2h, l2l}, dd{2 * s[r], 0})
		iv := ddDiv(dd{1, 0}, u)
		inv = append(inv, iv)
		a = append(a, ddDiv(ddMulF(iv, 2*s[r]), dd{l, 0}))
		b = append(b, ddMulF(ddMul(iv, iv), 2*l))
		pre = ddMul(pre, ddDiv(dd{l, 0}, ddSqrt(u)))
	}
	params := p.exactParams()
	ext := p.extOff()
	for k := range p.np {
		i, c := p.accAt(0, k), p.accAt(1, k)
		zb := p.zbarDD[k*q : (k+1)*q]
		ez := p.ezDD[k]
		ef := ez.hi
		for r, m := range mu {
			d := m - zb[r].hi
			sq[r] = dd{d * d, 0}
			ef -= sq[r].hi * inv[r].hi
		}
		var v dd
		if ef >= exactTailExp {
			eh, el := ez.hi, ez.lo
			for r, m := range mu {
				// d = μ − z̄ (exact but for z̄'s low part), d², d²·inv
				dh, dl := twoSum(m, -zb[r].hi)
				dl -= zb[r].lo
				sh, sl := twoProd(dh, dh)
				sl += 2 * dh * dl
				sq[r] = dd{sh, sl}
				th, tl := twoProd(sh, inv[r].hi)
				tl += sh*inv[r].lo + sl*inv[r].hi
				var x float64
				eh, x = twoSum(eh, -th)
				el += x - tl
			}
			eh, el = quickTwoSum(eh, el)
			v = ddMul(pre, ddExp(dd{eh, el}))
		} else {
			v = dd{pre.hi * math.Exp(ef), 0}
		}
		h, l := twoSum(acc[i], v.hi)
		acc[i] = h
		acc[c] += l + v.lo
		if !params {
			continue
		}
		// ∂Ψ2/∂ℓ_r = Ψ2·(a_r + b_r·(μ_r − z̄_r)² + ∂ez/∂ℓ_r), the last term
		// the same for every datum (paramSums multiplies ΣΨ2 by it)
		e := acc[ext+2*k*q : ext+2*(k+1)*q]
		for r := range q {
			t := ddMul(v, ddAddPos(a[r], ddMul(b[r], sq[r])))
			h, l := twoSum(e[2*r], t.hi)
			e[2*r] = h
			e[2*r+1] += l + t.lo
		}
	}
}

// paramSums adds the Ψ2 part of the kernel parameters' gradient,
// Σ_n tr(G·∂Ψ2_n/∂θ), to dParams, given contract(hi, lo) = tr(G·Y) for a
// symmetric Y = hi + lo: θ = σ² by ΣΨ2 = sumHi + sumLo (sum2's, Ψ2 ∝ σ⁴),
// θ = ℓ_r by sumExact's exact sums, formed in hi and lo (M×M scratch). The layer contracts them with G in whitened form: G's
// float64 entries, up to ~cond(Kuu) times the result's scale, lost the
// robot model's variance gradient 3e-5 of 0.76 that way
// (precision_robot_test.go). It reports false, adding nothing, where the
// pair loop's float64 sums carry that part (finish).
func (p *rbfPsi2) paramSums(acc *psi2Acc, sumHi, sumLo, hi, lo []float64, contract func(hi, lo []float64) float64, dParams []float64) bool {
	if !p.exactParams() {
		return false
	}
	m, q := p.m, p.q
	dParams[0] += 2 / p.k.Variance * contract(sumHi, sumLo)
	ext := acc.buf[p.extOff():]
	for r := range q {
		for k := range p.pi {
			i, j := int(p.pi[k]), int(p.pj[k])
			s := ddAdd(dd{ext[2*(k*q+r)], ext[2*(k*q+r)+1]}, ddMul(p.ezDer[k*q+r], dd{sumHi[i*m+j], sumLo[i*m+j]}))
			h, l := twoSum(s.hi, s.lo)
			hi[i*m+j], hi[j*m+i] = h, h
			lo[i*m+j], lo[j*m+i] = l, l
		}
		dParams[1+r] += contract(hi, lo)
	}
	return true
}

// exactTailExp is the exponent below which sumExact adds a Ψ2 entry in
// float64: the entry is below e⁻¹⁸·pre ≈ 1.5e-8·pre and its rounding
// below 2e-24·pre.
const exactTailExp = -18

func resizeDD(b []dd, n int) []dd {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]dd, n)
}

// scratch returns buf[:n] when it fits, so that small dimensions need no
// allocation in hot loops, and a fresh slice otherwise.
func scratch(buf []float64, n int) []float64 {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]float64, n)
}
