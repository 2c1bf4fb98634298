package engine

// A high-precision reference for the bound: the same model computed in
// math/big floats, term by term from the definitions (docs/engine-api.md),
// with an explicit inverse of Kuu — which in refPrec bits is exact to far
// more digits than float64 holds even at cond(Kuu) = 1e8 — and the
// gradient by central differences of that bound. It supports the ARD RBF
// kernel, the one the fitted fixtures use.

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"runtime"
	"slices"
	"sync"
)

// refPrec is the reference's working precision in bits: ~38 decimal
// digits, so that the ~8 digits that cond(Kuu) ≤ 1e8 costs leave ~30.
const refPrec = 128

type bf = *big.Float

func bnew() bf          { return new(big.Float).SetPrec(refPrec) }
func bfl(x float64) bf  { return bnew().SetFloat64(x) }
func badd(a, b bf) bf   { return bnew().Add(a, b) }
func bsub(a, b bf) bf   { return bnew().Sub(a, b) }
func bmul(a, b bf) bf   { return bnew().Mul(a, b) }
func bquo(a, b bf) bf   { return bnew().Quo(a, b) }
func bsqrt(a bf) bf     { return bnew().Sqrt(a) }
func bf64(a bf) float64 { f, _ := a.Float64(); return f }

// bacc adds a·b to acc through a pooled temporary: without it the
// reference spends half its time allocating mantissas.
func bacc(acc *big.Float, a, b bf) {
	t := tmpPool.Get().(*big.Float)
	acc.Add(acc, t.Mul(a, b))
	tmpPool.Put(t)
}

var tmpPool = sync.Pool{New: func() any { return bnew() }}

// bexp is exp(x) to refPrec bits: exp(x/2^s)^(2^s) with |x/2^s| < 2^-12
// by Taylor's series (Horner, with the reciprocal factorials computed
// once), in refPrec+32 bits so that the s squarings (each doubling the
// relative error) cost nothing visible.
func bexp(x bf) bf {
	const prec = expPrec
	s := 12
	if a := math.Abs(bf64(x)); a > 1 {
		s += int(math.Ceil(math.Log2(a)))
	}
	r := new(big.Float).SetPrec(prec).SetMantExp(x, -s)
	sum := new(big.Float).SetPrec(prec).Set(invFact[len(invFact)-1])
	for k := len(invFact) - 2; k >= 0; k-- {
		sum.Mul(sum, r)
		sum.Add(sum, invFact[k])
	}
	for range s {
		sum.Mul(sum, sum)
	}
	return bnew().Set(sum)
}

// expPrec is bexp's working precision; invFact[k] = 1/k! for the terms
// that |r| < 2^-12 needs: r^k/k! < 2^-expPrec once 12k + log2 k! > expPrec.
const expPrec = refPrec + 32

var invFact = func() []bf {
	f := []bf{new(big.Float).SetPrec(expPrec).SetInt64(1)}
	for k := int64(1); ; k++ {
		v := new(big.Float).SetPrec(expPrec).Quo(f[k-1], new(big.Float).SetPrec(expPrec).SetInt64(k))
		f = append(f, v)
		if 12*int(k)-v.MantExp(nil) > expPrec+8 {
			return f
		}
	}
}()

// blog is log(x) for x > 0: x = f·2^e with ½ ≤ f < 1, log f by Halley's
// iteration on exp from float64's log (each step triples the correct bits:
// 53 → 159 → …), plus e·log 2 — so that products of many small
// determinant factors, beyond float64's range, have logs too.
func blog(x bf) bf {
	f := bnew()
	e := x.MantExp(f)
	return badd(blogMant(f), bmul(bfl(float64(e)), bln2))
}

func blogMant(x bf) bf {
	y := bfl(math.Log(bf64(x)))
	for range 3 {
		ex := bexp(y)
		y = badd(y, bquo(bmul(bfl(2), bsub(x, ex)), badd(x, ex)))
	}
	return y
}

var bln2 = blogMant(bfl(2))

// bpi is π to 100 digits.
var bpi, _, _ = big.ParseFloat("3.141592653589793238462643383279502884197169399375105820974944592307816406286208998628034825342117068", 10, refPrec, big.ToNearestEven)

// refModel is a model whose parameters are held in big floats, in the
// order of Model.ParamLayout.
type refModel struct {
	jitter bf
	x, y   [][]bf
	shape  [][3]int // per layer M, Q, D
	off    []int    // per layer, its first parameter
}

func newRefModel(m *Model) (*refModel, []bf) {
	r := &refModel{jitter: bfl(m.Jitter)}
	toBig := func(a interface{ At(i, j int) float64 }, n, c int) [][]bf {
		out := make([][]bf, n)
		for i := range out {
			out[i] = make([]bf, c)
			for j := range c {
				out[i][j] = bfl(a.At(i, j))
			}
		}
		return out
	}
	n, q := m.X.Dims()
	_, d := m.Y.Dims()
	r.x, r.y = toBig(m.X, n, q), toBig(m.Y, n, d)
	off := 0
	for _, l := range m.Layers {
		if _, ok := l.Kernel.(*RBF); !ok {
			panic("bigref: only the ARD RBF kernel")
		}
		mz, q, d := l.Dims()
		r.shape = append(r.shape, [3]int{mz, q, d})
		r.off = append(r.off, off)
		off += 1 + q + 1 + mz*q + mz*d + d*mz*(mz+1)/2
	}
	var p []bf
	for _, v := range m.Params(nil) {
		p = append(p, bfl(v))
	}
	return r, p
}

// layerOf returns the layer that parameter k belongs to.
func (r *refModel) layerOf(k int) int {
	i := 0
	for i+1 < len(r.off) && r.off[i+1] <= k {
		i++
	}
	return i
}

type refLayerParams struct {
	variance, noise bf
	ls              []bf
	z, mu           [][]bf
	lq              [][][]bf // D of M×M lower triangular
}

func (r *refModel) params(i int, p []bf) refLayerParams {
	m, q, d := r.shape[i][0], r.shape[i][1], r.shape[i][2]
	k := r.off[i]
	next := func() bf { k++; return p[k-1] }
	var lp refLayerParams
	lp.variance = next()
	for range q {
		lp.ls = append(lp.ls, next())
	}
	lp.noise = next()
	lp.z = make([][]bf, m)
	for a := range m {
		for range q {
			lp.z[a] = append(lp.z[a], next())
		}
	}
	lp.mu = make([][]bf, m)
	for a := range m {
		for range d {
			lp.mu[a] = append(lp.mu[a], next())
		}
	}
	for range d {
		l := make([][]bf, m)
		for a := range m {
			l[a] = make([]bf, m)
			for b := range m {
				if b <= a {
					l[a][b] = next()
				} else {
					l[a][b] = bfl(0)
				}
			}
		}
		lp.lq = append(lp.lq, l)
	}
	return lp
}

// refMsg is a Gaussian message, N×D; vr is nil for the certain input.
type refMsg struct{ mean, vr [][]bf }

// refPsi holds a layer's ψ statistics; psi2 is nil for a certain input
// (Ψ2_n = ψ1_nᵀψ1_n).
type refPsi struct {
	psi0 bf
	psi1 [][]bf
	psi2 [][][]bf
	// Kuu⁻¹ and log|Kuu|, which depend on the kernel and Z alone.
	kinv   [][]bf
	logdet bf
}

func refPsiStats(lp *refLayerParams, in refMsg) *refPsi {
	n, m, q := len(in.mean), len(lp.z), len(lp.ls)
	ps := &refPsi{psi0: lp.variance, psi1: make([][]bf, n)}
	l2 := make([]bf, q)
	for r := range q {
		l2[r] = bmul(lp.ls[r], lp.ls[r])
	}
	half := bfl(0.5)
	for i := range n {
		pre := lp.variance
		den := make([]bf, q) // ℓ² + s
		for r := range q {
			den[r] = l2[r]
			if in.vr != nil {
				den[r] = badd(l2[r], in.vr[i][r])
				pre = bquo(pre, bsqrt(bquo(den[r], l2[r])))
			}
		}
		ps.psi1[i] = make([]bf, m)
		for a := range m {
			e := bnew()
			for r := range q {
				dd := bsub(in.mean[i][r], lp.z[a][r])
				e.Add(e, bquo(bmul(dd, dd), den[r]))
			}
			ps.psi1[i][a] = bmul(pre, bexp(bmul(e, bfl(-0.5))))
		}
	}
	if in.vr == nil {
		return ps
	}
	_ = half
	ps.psi2 = make([][][]bf, n)
	v2 := bmul(lp.variance, lp.variance)
	for i := range n {
		pre := v2
		den := make([]bf, q) // ℓ² + 2s
		for r := range q {
			den[r] = badd(l2[r], bmul(bfl(2), in.vr[i][r]))
			pre = bquo(pre, bsqrt(bquo(den[r], l2[r])))
		}
		p2 := make([][]bf, m)
		for a := range m {
			p2[a] = make([]bf, m)
		}
		for a := range m {
			for b := a; b < m; b++ {
				e := bnew()
				for r := range q {
					dz := bsub(lp.z[a][r], lp.z[b][r])
					e.Add(e, bquo(bmul(dz, dz), bmul(bfl(4), l2[r])))
					zbar := bmul(half, badd(lp.z[a][r], lp.z[b][r]))
					dm := bsub(in.mean[i][r], zbar)
					e.Add(e, bquo(bmul(dm, dm), den[r]))
				}
				v := bmul(pre, bexp(bnew().Neg(e)))
				p2[a][b], p2[b][a] = v, v
			}
		}
		ps.psi2[i] = p2
	}
	return ps
}

// refLayerOut is one layer's terms and output message.
type refLayerOut struct {
	kl, comp, prop bf
	msg            refMsg
	trB            bf // Σ_n Σ_d ψ1_n B_d ψ1_nᵀ, for the likelihood
}

// bigKuu is the RBF Kuu (with jitter on the diagonal) in big floats; with
// round, its entries are rounded to float64 as the engine holds them (the
// precision diagnosis).
func bigKuu(lp *refLayerParams, jitter bf, round bool) [][]bf {
	m, q := len(lp.z), len(lp.ls)
	kuu := make([][]bf, m)
	for a := range m {
		kuu[a] = make([]bf, m)
	}
	for a := range m {
		for b := a; b < m; b++ {
			e := bnew()
			for r := range q {
				dz := bquo(bsub(lp.z[a][r], lp.z[b][r]), lp.ls[r])
				e.Add(e, bmul(dz, dz))
			}
			kuu[a][b] = bmul(lp.variance, bexp(bmul(e, bfl(-0.5))))
			if round {
				kuu[a][b] = bfl(bf64(kuu[a][b]))
			}
			if a == b {
				kuu[a][b] = badd(kuu[a][b], jitter)
				if round {
					kuu[a][b] = bfl(bf64(kuu[a][b]))
				}
			}
			kuu[b][a] = kuu[a][b]
		}
	}
	return kuu
}

func refKuu(lp *refLayerParams, ps *refPsi, jitter bf) {
	m := len(lp.z)
	// Kuu, its Cholesky factor and inverse.
	kuu := bigKuu(lp, jitter, false)
	chol, w := bigCholInverse(kuu)
	kinv := make([][]bf, m)
	for a := range m {
		kinv[a] = make([]bf, m)
		for b := range m {
			s := bnew()
			for k := max(a, b); k < m; k++ {
				bacc(s, w[k][a], w[k][b])
			}
			kinv[a][b] = s
		}
	}
	prod := bfl(1)
	for j := range m {
		prod = bmul(prod, bmul(chol[j][j], chol[j][j]))
	}
	ps.kinv, ps.logdet = kinv, blog(prod)
}

func refLayer(lp *refLayerParams, ps *refPsi, needVar bool) *refLayerOut {
	m, d, n := len(lp.z), len(lp.mu[0]), len(ps.psi1)
	kinv, logdet := ps.kinv, ps.logdet
	matmul := func(x, y [][]bf) [][]bf {
		out := make([][]bf, len(x))
		for a := range x {
			out[a] = make([]bf, len(y[0]))
			for b := range y[0] {
				s := bnew()
				for k := range y {
					bacc(s, x[a][k], y[k][b])
				}
				out[a][b] = s
			}
		}
		return out
	}
	amat := matmul(kinv, lp.mu) // M×D
	// S_d = L_d L_dᵀ, B_d = Kinv S_d Kinv, C = Σ_d A_d A_dᵀ + B_d.
	bs := make([][][]bf, d)
	c := make([][]bf, m)
	for a := range m {
		c[a] = make([]bf, m)
		for b := range m {
			s := bnew()
			for k := range d {
				bacc(s, amat[a][k], amat[b][k])
			}
			c[a][b] = s
		}
	}
	kl := bfl(float64(-d * m))
	prodS := bfl(1) // Π_d |S_d|
	for k := range d {
		sd := make([][]bf, m)
		for a := range m {
			sd[a] = make([]bf, m)
			for b := range m {
				s := bnew()
				for j := 0; j <= min(a, b); j++ {
					bacc(s, lp.lq[k][a][j], lp.lq[k][b][j])
				}
				sd[a][b] = s
			}
		}
		bs[k] = matmul(matmul(kinv, sd), kinv)
		for a := range m {
			for b := range m {
				c[a][b] = badd(c[a][b], bs[k][a][b])
				bacc(kl, kinv[a][b], sd[a][b]) // tr(Kinv S_d)
			}
			bacc(kl, lp.mu[a][k], amat[a][k]) // m_dᵀ Kinv m_d
			prodS = bmul(prodS, bmul(lp.lq[k][a][a], lp.lq[k][a][a]))
		}
		kl = badd(kl, logdet)
	}
	kl = bsub(kl, blog(prodS))
	out := &refLayerOut{kl: bmul(kl, bfl(0.5)), comp: bfl(0), prop: bfl(0), trB: bfl(0)}
	quadf := func(x []bf, wm [][]bf) bf {
		s := bnew()
		for a := range x {
			t := bnew()
			for b := range x {
				bacc(t, wm[a][b], x[b])
			}
			bacc(s, x[a], t)
		}
		return s
	}
	trace := func(x, y [][]bf) bf {
		s := bnew()
		for a := range x {
			for b := range x {
				bacc(s, x[a][b], y[b][a])
			}
		}
		return s
	}
	inv2s2 := bquo(bfl(0.5), lp.noise)
	fd := bfl(float64(d))
	out.msg.mean = make([][]bf, n)
	if needVar {
		out.msg.vr = make([][]bf, n)
	}
	for i := range n {
		p1 := ps.psi1[i]
		var tK bf
		if ps.psi2 == nil {
			tK = quadf(p1, kinv)
		} else {
			tK = trace(kinv, ps.psi2[i])
			out.prop = badd(out.prop, bmul(inv2s2, bsub(trace(c, ps.psi2[i]), quadf(p1, c))))
		}
		out.comp = badd(out.comp, bmul(bmul(fd, inv2s2), bsub(ps.psi0, tK)))
		out.msg.mean[i] = make([]bf, d)
		if needVar {
			out.msg.vr[i] = make([]bf, d)
		}
		for k := range d {
			s := bnew()
			for a := range m {
				bacc(s, p1[a], amat[a][k])
			}
			out.msg.mean[i][k] = s
			qb := quadf(p1, bs[k])
			out.trB = badd(out.trB, qb)
			if needVar {
				out.msg.vr[i][k] = badd(lp.noise, qb)
			}
		}
	}
	return out
}

// refState is an evaluation of the reference bound, kept so that a
// perturbation of layer i's parameters recomputes layers i… only.
type refState struct {
	in   []refMsg  // the input message of each layer
	psi  []*refPsi // each layer's ψ statistics
	outs []*refLayerOut
	lik  bf
}

// eval evaluates the bound for parameters p, reusing base's layers below
// `from` and, when keepPsi, base's ψ statistics of layer `from`.
func (r *refModel) eval(p []bf, base *refState, from int, keepPsi bool) (bf, *refState) {
	nl := len(r.shape)
	st := &refState{in: make([]refMsg, nl), psi: make([]*refPsi, nl), outs: make([]*refLayerOut, nl)}
	in := refMsg{mean: r.x}
	for i := range nl {
		if i < from {
			st.in[i], st.psi[i], st.outs[i] = base.in[i], base.psi[i], base.outs[i]
			in = base.outs[i].msg
			continue
		}
		lp := r.params(i, p)
		st.in[i] = in
		if i == from && keepPsi {
			st.psi[i] = base.psi[i]
		} else {
			st.psi[i] = refPsiStats(&lp, in)
			refKuu(&lp, st.psi[i], r.jitter)
		}
		st.outs[i] = refLayer(&lp, st.psi[i], i < nl-1)
		in = st.outs[i].msg
	}
	// The likelihood of Y under the last message.
	last := r.params(nl-1, p)
	n, d := len(r.y), len(r.y[0])
	sq := bnew()
	for i := range n {
		for k := range d {
			e := bsub(r.y[i][k], in.mean[i][k])
			bacc(sq, e, e)
		}
	}
	inv2s2 := bquo(bfl(0.5), last.noise)
	lik := bmul(bfl(-0.5*float64(n*d)), blog(bmul(bmul(bfl(2), bpi), last.noise)))
	lik = bsub(lik, bmul(inv2s2, badd(sq, st.outs[nl-1].trB)))
	st.lik = lik
	bound := bnew().Set(lik)
	for _, o := range st.outs {
		bound.Sub(bound, badd(o.kl, badd(o.comp, o.prop)))
	}
	return bound, st
}

// refBound is the reference bound and the state to perturb from.
func refBound(m *Model) (*refModel, []bf, bf, *refState) {
	r, p := newRefModel(m)
	b, st := r.eval(p, nil, 0, false)
	return r, p, b, st
}

// refGradient is the gradient of the reference bound by central
// differences with step h_k = 2^hexp·max(1, |p_k|), in parallel over the
// parameters. In refPrec bits the rounding error of a difference is
// ~2^-(refPrec−30)/h and the truncation error ~h²·f”'/6.
//
// Only the parameters in which are differenced (all when which is nil);
// the others are NaN.
func refGradient(r *refModel, p []bf, base *refState, hexp int, which []int) []float64 {
	return refGradientOf(r, p, base, hexp, which, func(b bf, _ []bf, _ *refState) bf { return b })
}

// refGradientOf is refGradient of the function bound(b, p, st) of the
// reference bound b and its state st at the parameters p (the collapsed
// bound, say).
func refGradientOf(r *refModel, p []bf, base *refState, hexp int, which []int, bound func(b bf, p []bf, st *refState) bf) []float64 {
	layout := groupsOf(r)
	g := make([]float64, len(p))
	if which == nil {
		for k := range p {
			which = append(which, k)
		}
	}
	for k := range g {
		g[k] = math.NaN()
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for k := range next {
				h := new(big.Float).SetPrec(refPrec).SetMantExp(bfl(math.Max(1, math.Abs(bf64(p[k])))), hexp)
				keep := layout[k] == GroupNoise || layout[k] == GroupQMu || layout[k] == GroupQSqrt
				at := func(v bf) bf {
					q := append([]bf(nil), p...)
					q[k] = v
					b, st := r.eval(q, base, r.layerOf(k), keep)
					return bound(b, q, st)
				}
				fp, fm := at(badd(p[k], h)), at(bsub(p[k], h))
				g[k] = bf64(bquo(bsub(fp, fm), bmul(bfl(2), h)))
			}
		})
	}
	for _, k := range which {
		next <- k
	}
	close(next)
	wg.Wait()
	return g
}

// groupsOf is the group of each parameter of r.
func groupsOf(r *refModel) []Group {
	var out []Group
	for _, sh := range r.shape {
		m, q, d := sh[0], sh[1], sh[2]
		for range 1 + q {
			out = append(out, GroupKernel)
		}
		out = append(out, GroupNoise)
		for range m * q {
			out = append(out, GroupInducing)
		}
		for range m * d {
			out = append(out, GroupQMu)
		}
		for range d * m * (m + 1) / 2 {
			out = append(out, GroupQSqrt)
		}
	}
	return out
}

// groupErrors is, per layer and group, max_k |g_k − ref_k| / max_k |ref_k|
// over the group's entries: the error relative to the group's scale (at a
// fitted model single entries are near 0, so entrywise relative errors
// mean nothing).
type groupError struct {
	layer int
	group Group
	err   float64
	scale float64 // max |ref_k|
}

func groupErrors(r *refModel, g, ref []float64) []groupError {
	groups := groupsOf(r)
	var out []groupError
	for i := range r.shape {
		lo, hi := r.off[i], len(g)
		if i+1 < len(r.off) {
			hi = r.off[i+1]
		}
		for gr := GroupKernel; gr <= GroupQSqrt; gr++ {
			var diff, scale float64
			for k := lo; k < hi; k++ {
				if groups[k] != gr || math.IsNaN(ref[k]) || math.IsNaN(g[k]) {
					continue
				}
				diff = math.Max(diff, math.Abs(g[k]-ref[k]))
				scale = math.Max(scale, math.Abs(ref[k]))
			}
			out = append(out, groupError{i, gr, diff / scale, scale})
		}
	}
	return out
}

func (e groupError) String() string {
	return fmt.Sprintf("layer %d %-8s rel err %.2e (scale %.3g)", e.layer, e.group, e.err, e.scale)
}

// sampleParams picks the parameters to difference: every one of a group
// of at most 2·per entries, otherwise the per entries where the engine's
// gradient g is largest and per evenly spaced others. The big-float
// differences cost ~0.1 s per parameter of a lower layer, and the 78
// entries of a q_sqrt of M = 12 would dominate.
func sampleParams(r *refModel, g []float64, per int) []int {
	groups := groupsOf(r)
	var out []int
	for i := range r.shape {
		lo, hi := r.off[i], len(groups)
		if i+1 < len(r.off) {
			hi = r.off[i+1]
		}
		for gr := GroupKernel; gr <= GroupQSqrt; gr++ {
			var idx []int
			for k := lo; k < hi; k++ {
				if groups[k] == gr {
					idx = append(idx, k)
				}
			}
			if len(idx) <= 2*per {
				out = append(out, idx...)
				continue
			}
			byMag := slices.Clone(idx)
			slices.SortStableFunc(byMag, func(a, b int) int { return cmp.Compare(math.Abs(g[b]), math.Abs(g[a])) })
			pick := map[int]bool{}
			for _, k := range byMag[:per] {
				pick[k] = true
			}
			for j := range per {
				pick[idx[j*len(idx)/per]] = true
			}
			for _, k := range idx {
				if pick[k] {
					out = append(out, k)
				}
			}
		}
	}
	return out
}

// bigCholInverse returns the Cholesky factor L of kuu (LLᵀ = kuu) and
// W = L⁻¹, in big floats: the reference's and the diagnosis's one
// factorisation.
func bigCholInverse(kuu [][]bf) (chol, w [][]bf) {
	m := len(kuu)
	chol = make([][]bf, m)
	for a := range m {
		chol[a] = make([]bf, m)
		for b := range m {
			chol[a][b] = bfl(0)
		}
	}
	for j := range m {
		s := bnew().Set(kuu[j][j])
		for k := range j {
			s.Sub(s, bmul(chol[j][k], chol[j][k]))
		}
		if s.Sign() <= 0 {
			panic("bigref: Kuu not positive definite")
		}
		chol[j][j] = bsqrt(s)
		for i := j + 1; i < m; i++ {
			s := bnew().Set(kuu[i][j])
			for k := range j {
				s.Sub(s, bmul(chol[i][k], chol[j][k]))
			}
			chol[i][j] = bquo(s, chol[j][j])
		}
	}
	// W = L⁻¹ by forward substitution.
	w = make([][]bf, m)
	for a := range m {
		w[a] = make([]bf, m)
	}
	for c := range m {
		for i := range m {
			if i < c {
				w[i][c] = bfl(0)
				continue
			}
			s := bfl(0)
			if i == c {
				s = bfl(1)
			}
			for k := c; k < i; k++ {
				s.Sub(s, bmul(chol[i][k], w[k][c]))
			}
			w[i][c] = bquo(s, chol[i][i])
		}
	}
	return chol, w
}
