package montecarlo

import (
	"dgpviz/internal/linalg"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// Fast path of the message figure (the live panel's update).
//
// For a layer with a 1-D input and output and an RBF kernel, a sample of
// the true response at a certain input x needs the deterministic functions
//
//	mean(x) = k(x,Z)·A        and        v(x) = [k(x,x)] + k(x,Z) Q k(Z,x)
//
// (Q = [−Kuu⁻¹] + [B], see plan), which cost M exponentials and an M²
// quadratic form per sample. Both are smooth, so the figure tabulates them
// with their exact derivatives on a uniform grid over the range its inputs
// are sampled in and evaluates the piecewise cubic Hermite interpolant
// instead. The random streams are consumed exactly as by the exact path, so
// each sample moves only by the interpolation error.
//
// Error bound. On a grid of step h the cubic Hermite interpolant of f
// errs by at most h⁴/384 · max|f⁗|. Both functions are built from
// functions in the reproducing kernel Hilbert space H of the RBF kernel
// k(x,x') = σ² exp(−(x−x')²/(2ℓ²)), whose derivatives are bounded by the
// RKHS norm (Cauchy–Schwarz with the derivative's representer):
//
//	|f⁽ʲ⁾(x)| ≤ ‖f‖_H · σ · √D_j,   D_j = (2j−1)!!/ℓ^{2j}  (1, 1/ℓ², 3/ℓ⁴, 15/ℓ⁶, 105/ℓ⁸).
//
// The mean is in H with ‖mean‖²_H = mᵀKuu⁻¹m = ‖Lk⁻¹m‖², so
//
//	|mean⁗| ≤ √105 · σ ‖Lk⁻¹m‖ / ℓ⁴.
//
// With v(x) = Lk⁻¹k(Z,x), whose components have ‖v_i‖_H ≤ 1, and
// w = P v (P = Lk⁻¹L, L the q(u) Cholesky factor), k Q k = ‖w‖² − ‖v‖², a
// sum of squares of RKHS functions, and (f²)⁗ = 2(f f⁗ + 4f′f‴ + 3f″²)
// gives |(f²)⁗| ≤ 2(√105 + 4√15 + 9)σ²‖f‖²_H/ℓ⁴ < 69.5σ²‖f‖²_H/ℓ⁴, so
//
//	|v⁗| ≤ 69.5 σ² (‖P‖²_F + M) / ℓ⁴
//
// (k(x,x) = σ² is constant). Unlike bounds through Σ|A_j|, these do not
// grow with the conditioning of Kuu. The step is chosen so that the error
// bounds are at most hermiteTol·σ for the mean (E_m) and hermiteTol·σ² for
// the variance (E_v). With ε the sample's own N(0,1) draw, a sample then
// differs from the exact path's by at most E_m + |ε|·min(√E_v, E_v/σ_n)
// (σ_n² the noise variance); TestHermiteMatchesExact checks this bound and
// measures the actual difference, which is orders of magnitude below the
// Monte Carlo error of 20,000 samples (≈ 0.7 % of the response's sd).
// Inputs drawn outside the table (beyond ±hermiteSpan sd of every input,
// probability ≈ 2·10⁻⁹ per sample) use the exact path.

// hermiteTol is the relative interpolation error target (see above).
const hermiteTol = 1e-6

// hermiteSpan: the table covers each input's mean ± hermiteSpan sd.
const hermiteSpan = 6.0

// maxHermitePoints bounds the table; beyond it the exact path is used.
const maxHermitePoints = 1 << 16

// hermite tabulates mean, v and their derivatives for interpolation.
type hermite struct {
	lo, hi, h, invH float64
	n               int
	f               []float64 // n × 4: mean, mean', v, v'
	errMean, errVar float64   // the bounds above for the chosen step
}

// newHermite builds the table of plan p (a 1-D RBF layer with one output,
// default Options) over [lo, hi], or returns nil when the layer does not
// qualify or the table would be too large.
func newHermite(p *plan, lo, hi float64) *hermite {
	l := p.l
	if l.kind != kindRBF || l.q != 1 || l.d != 1 || !(hi > lo) || math.IsInf(hi-lo, 0) {
		return nil
	}
	m := l.m
	s2 := l.rbfVar
	ell4 := 1 / (4 * l.rbfH[0] * l.rbfH[0]) // ℓ⁴ = (1/(2H))²
	var normC, normP float64
	for _, c := range l.c[0] {
		normC += c * c
	}
	for _, v := range l.pt[0] {
		normP += v * v
	}
	d4m := math.Sqrt(105*s2*normC) / ell4
	d4v := 69.5 * s2 * (normP + float64(m)) / ell4
	// h⁴/384·max|f⁗| ≤ tol  ⇒  h ≤ (384·tol/max|f⁗|)^{1/4}.
	h := hi - lo
	if d4m > 0 {
		h = math.Min(h, math.Pow(384*hermiteTol*math.Sqrt(s2)/d4m, 0.25))
	}
	if d4v > 0 {
		h = math.Min(h, math.Pow(384*hermiteTol*s2/d4v, 0.25))
	}
	if !(h > 0) {
		return nil
	}
	n := int(math.Ceil((hi-lo)/h)) + 1
	if n < 2 {
		n = 2
	}
	if n > maxHermitePoints {
		return nil
	}
	h = (hi - lo) / float64(n-1)
	t := &hermite{lo: lo, hi: hi, h: h, invH: 1 / h, n: n, f: make([]float64, 4*n)}
	h4 := h * h * h * h / 384
	t.errMean, t.errVar = h4*d4m, h4*d4v
	// Values and derivatives through the Cholesky factor, as
	// Layer.conditional: v = Lk⁻¹k(Z,x), mean = v·c, k Kuu⁻¹ k = ‖v‖²,
	// k B k = ‖Pᵀv‖² (better conditioned than kᵀQk with Kuu⁻¹ itself).
	// Rows are independent: fill them in parallel (the table is built
	// on every figure update).
	workers := min(runtime.GOMAXPROCS(0), max(1, n/512))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.fill(l, w*n/workers, (w+1)*n/workers)
		}()
	}
	wg.Wait()
	return t
}

// fill computes rows [from, to) of the table.
func (t *hermite) fill(l *Layer, from, to int) {
	m, s2 := l.m, l.rbfVar
	kx, dk, v, dv := make([]float64, m), make([]float64, m), make([]float64, m), make([]float64, m)
	c, pt := l.c[0], l.pt[0]
	for i := from; i < to; i++ {
		x := t.lo + t.h*float64(i)
		for j := 0; j < m; j++ {
			d := x - l.z[j]
			kx[j] = s2 * math.Exp(-d*d*l.rbfH[0])
			dk[j] = -2 * l.rbfH[0] * d * kx[j]
		}
		copy(v, kx)
		copy(dv, dk)
		linalg.ForwardSolve(l.lk, m, v)
		linalg.ForwardSolve(l.lk, m, dv)
		var mean, dmean, vv, dvv float64
		for j := 0; j < m; j++ {
			mean += v[j] * c[j]
			dmean += dv[j] * c[j]
			vv += v[j] * v[j]
			dvv += 2 * v[j] * dv[j]
		}
		var u, du float64
		for j := 0; j < m; j++ {
			row := pt[j*m+j : j*m+m]
			var r, dr float64
			for k, pv := range row {
				r += pv * v[j+k]
				dr += pv * dv[j+k]
			}
			u += r * r
			du += 2 * r * dr
		}
		t.f[4*i], t.f[4*i+1], t.f[4*i+2], t.f[4*i+3] = mean, dmean, s2-vv+u, du-dvv
	}
}

// eval returns the interpolated mean and v at x; ok is false outside the
// table.
func (t *hermite) eval(x float64) (mean, v float64, ok bool) {
	if !(x >= t.lo && x <= t.hi) {
		return 0, 0, false
	}
	u := (x - t.lo) * t.invH
	i := int(u)
	if i >= t.n-1 {
		i = t.n - 2
	}
	s := u - float64(i)
	s2 := s * s
	s3 := s2 * s
	h00 := 2*s3 - 3*s2 + 1
	h10 := (s3 - 2*s2 + s) * t.h
	h01 := 3*s2 - 2*s3
	h11 := (s3 - s2) * t.h
	f := t.f[4*i : 4*i+8]
	mean = h00*f[0] + h10*f[1] + h01*f[4] + h11*f[5]
	v = h00*f[2] + h10*f[3] + h01*f[6] + h11*f[7]
	return mean, v, true
}

// drawFast is plan.draw through the table when x lies in it.
func (p *plan) drawFast(out, x []float64, rng *rand.Rand) bool {
	mean, v, ok := p.tab.eval(x[0])
	if !ok {
		return false
	}
	v = math.Max(v, 0) + p.noise
	out[0] = mean
	if v > 0 {
		out[0] += math.Sqrt(v) * rng.NormFloat64()
	}
	return true
}

// figureTable sets up the fast path of a message-figure job (one 1-D
// layer): a table over every input's mean ± hermiteSpan sd.
func (j *job) figureTable() {
	if len(j.plans) != 1 || j.q0 != 1 || j.s == nil || j.opt.NoConditional || j.opt.NoQSpread || j.opt.NoNoise {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := 0; i < j.n; i++ {
		sd := math.Sqrt(j.s[i])
		lo, hi = math.Min(lo, j.mu[i]-hermiteSpan*sd), math.Max(hi, j.mu[i]+hermiteSpan*sd)
	}
	j.plans[0].tab = newHermite(j.plans[0], lo, hi)
}
