package engine

import (
	"fmt"
	"math"

	"dgpviz/internal/linalg"
)

// RBFIso is the isotropic exponentiated quadratic kernel
//
//	k(a, b) = Variance · exp(−½ Σ_q (a_q − b_q)² / Lengthscale²),
//
// the RBF with all Q lengthscales tied to one. It suits wide inputs such as
// the 560 pixels of an image: one lengthscale instead of Q keeps the
// optimisation small and well conditioned, and a lengthscale of the order
// of the typical distance between inputs starts it where the kernel is
// neither zero nor constant.
//
// Its psi statistics are exactly those of the ARD RBF with equal
// lengthscales; the RBF's loops compute them and the lengthscale gradient
// is the sum of the tied lengthscales' gradients.
//
// Its parameters change only through SetParams, so that the psi loops,
// which run concurrently, only read.
type RBFIso struct {
	ard *RBF // the equivalent ARD kernel: Q copies of the lengthscale
}

// NewRBFIso returns an isotropic RBF kernel on q input dimensions.
func NewRBFIso(variance, lengthscale float64, q int) *RBFIso {
	ls := make([]float64, q)
	for r := range ls {
		ls[r] = lengthscale
	}
	return &RBFIso{ard: &RBF{Variance: variance, Lengthscales: ls}}
}

// Variance returns the kernel's variance.
func (k *RBFIso) Variance() float64 { return k.ard.Variance }

// Lengthscale returns the shared lengthscale.
func (k *RBFIso) Lengthscale() float64 { return k.ard.Lengthscales[0] }

// ARD returns the equivalent ARD RBF kernel (a new copy).
func (k *RBFIso) ARD() *RBF { return k.ard.Clone().(*RBF) }

func (k *RBFIso) Name() string         { return "rbfiso" }
func (k *RBFIso) InputDim() int        { return len(k.ard.Lengthscales) }
func (k *RBFIso) NumParams() int       { return 2 }
func (k *RBFIso) Clone() Kernel        { return NewRBFIso(k.Variance(), k.Lengthscale(), k.InputDim()) }
func (k *RBFIso) Params() []float64    { return []float64{k.Variance(), k.Lengthscale()} }
func (k *RBFIso) ParamNames() []string { return []string{"variance", "lengthscale"} }

func (k *RBFIso) SetParams(p []float64) {
	if len(p) != 2 {
		panic("engine: RBFIso.SetParams: wrong length")
	}
	k.ard.Variance = p[0]
	for r := range k.ard.Lengthscales {
		k.ard.Lengthscales[r] = p[1]
	}
}

func (k *RBFIso) Eval(a, b []float64) float64 {
	var e float64
	for q := range k.ard.Lengthscales {
		d := a[q] - b[q]
		e += d * d
	}
	l := k.Lengthscale()
	return k.Variance() * math.Exp(-0.5*e/(l*l))
}

// foldIso adds the gradient of the tied ARD parameters ard (variance, then Q
// lengthscales) into the isotropic dParams (variance, lengthscale).
func foldIso(dParams, ard []float64) {
	dParams[0] += ard[0]
	var s float64
	for _, v := range ard[1:] {
		s += v
	}
	dParams[1] += s
}

func (k *RBFIso) covGrad(z []float64, m int, kuu, g []float64, dZ, dParams []float64) {
	tmp := make([]float64, 1+k.InputDim())
	k.ard.covGrad(z, m, kuu, g, dZ, tmp)
	foldIso(dParams, tmp)
}

func (k *RBFIso) psi0(mu, s []float64) float64 { return k.ard.Variance }

func (k *RBFIso) psi0Grad(g float64, mu, s []float64, dMu, dS, dParams []float64) {
	dParams[0] += g
}

// psi1 is written out for a certain input: ψ1[m] = v·exp(−½|x − z_m|²/ℓ²)
// with the squared distances summed four at a time (the ARD loop's one
// chain of dependent adds is what limits it on 560 pixels).
func (k *RBFIso) psi1(dst []float64, mu, s, z, tmp []float64) {
	if s != nil {
		k.ard.psi1(dst, mu, s, z, tmp)
		return
	}
	q := k.InputDim()
	l := k.Lengthscale()
	h := 0.5 / (l * l)
	for m := range dst {
		dst[m] = -h * sqDistUnrolled(mu, z[m*q:(m+1)*q])
	}
	expAll(dst)
	for m := range dst {
		dst[m] *= k.ard.Variance
	}
}

// sqDistUnrolled returns Σ (a_i − b_i)² with four partial sums (init.go's
// sqDist, for k-means, sums in order).
func sqDistUnrolled(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0, d1, d2, d3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// addScaledDiff adds t·(a − b) to dst and returns Σ (a_i − b_i)², with
// four partial sums.
func addScaledDiff(dst []float64, t float64, a, b []float64) float64 {
	b, dst = b[:len(a)], dst[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0, d1, d2, d3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		dst[i] += t * d0
		dst[i+1] += t * d1
		dst[i+2] += t * d2
		dst[i+3] += t * d3
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		dst[i] += t * d
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// psi1Grad is written out for a certain input, the case of an input layer
// that sees the data (ψ1[m] = k(x, z_m)); an uncertain input goes through
// the ARD loops.
func (k *RBFIso) psi1Grad(g, psi1 []float64, mu, s, z []float64, dMu, dS, dZ, dParams, tmp []float64) {
	if s != nil {
		q := k.InputDim()
		t := scratch(tmp, rowScratchLen(q))
		ard := t[:1+q]
		clear(ard)
		k.ard.psi1Grad(g, psi1, mu, s, z, dMu, dS, dZ, ard, t[1+q:])
		foldIso(dParams, ard)
		return
	}
	q := k.InputDim()
	l := k.Lengthscale()
	il2 := 1 / (l * l)
	var sv, sl float64
	for m := range g {
		c := g[m] * psi1[m]
		if c == 0 {
			continue
		}
		sv += c
		zm := z[m*q : (m+1)*q]
		d2 := addScaledDiff(dZ[m*q:(m+1)*q], c*il2, mu, zm)
		if dMu != nil {
			addScaledDiff(dMu, -c*il2, mu, zm)
		}
		sl += c * d2
	}
	dParams[0] += sv / k.ard.Variance
	dParams[1] += sl * il2 / l
}

func (k *RBFIso) newPsi2(z []float64, m int, old psi2Kernel) psi2Kernel {
	var inner psi2Kernel
	if o, ok := old.(*isoPsi2); ok {
		inner = o.psi2Kernel
	}
	return &isoPsi2{psi2Kernel: k.ard.newPsi2(z, m, inner), q: k.InputDim()}
}

// isoPsi2 is the ARD RBF's Ψ2 loop with its hyperparameter gradient folded.
type isoPsi2 struct {
	psi2Kernel
	q int
}

func (p *isoPsi2) finish(acc *psi2Acc, dZ, dParams []float64) {
	tmp := make([]float64, 1+p.q)
	p.psi2Kernel.finish(acc, dZ, tmp)
	foldIso(dParams, tmp)
}

func (k *RBFIso) String() string {
	return fmt.Sprintf("rbfiso(variance %g, lengthscale %g, Q %d)", k.Variance(), k.Lengthscale(), k.InputDim())
}

// The certain-input rows (an input layer that sees the data, as Frey's
// 560 pixels): ψ1 and its gradient for a block of rows at once, through
// the squared distances
//
//	‖x − z‖² = ‖x‖² + ‖z‖² − 2 x·z,
//
// whose x·z for all rows and inducing points is one matrix product X·Zᵀ
// (the AVX2 kernel, mm) instead of a loop of differences per pair, and the
// gradient w.r.t. Z, Σ_n c_nm (x_n − z_m)/ℓ², as Cᵀ·X − diag(Σ_n c_nm)·Z.
//
// Rounding: x·z is summed over Q products of size up to ‖x‖‖z‖, so the
// computed distance is off by up to about γ_Q·(‖x‖² + ‖z‖²) (γ_Q ≈ Q·ε) and
// the exponent h·‖x − z‖² (h = 1/(2ℓ²)) by γ_Q·h·(‖x‖² + ‖z‖²), where the
// differences loop's error is γ_Q times the exponent itself, which is
// below 745 for any ψ1 that does not underflow. isoGemmLimit bounds
// h·(max ‖x‖² + max ‖z‖²) for the product form: a block beyond it (inputs
// far from the origin on the scale of the lengthscale) takes the
// differences loop, so the product form's error bound stays within a small
// factor (2·1024/745 < 3) of the loop's. The engine's inputs are normalised
// data (‖x‖² ≈ Q), and Frey's lengthscale ≈ √Q gives h·‖x‖² ≈ ½.
const isoGemmLimit = 1024

// isoRows is the per-evaluation state of the product form: Zᵀ (Q×M), the
// squared norms of Z's rows and the squared distances of the rows, kept
// from the forward pass for the lengthscale's gradient.
type isoRows struct {
	zT, zz []float64
	d2     []float64 // N×M
	xx     []float64 // N
	fast   []bool    // per chunk: the product form was used
}

// prepare sets Zᵀ and ‖z_m‖² for the kernel's inducing inputs z (M×Q) and
// sizes the per-datum arrays for n data in chunks chunks.
func (s *isoRows) prepare(z []float64, m, q, n, chunks int) {
	s.zT = linalg.Resize(s.zT, m*q)
	transpose(s.zT, z, m, q, q)
	s.zz = linalg.Resize(s.zz, m)
	for i := range m {
		s.zz[i] = linalg.Dot(z[i*q:(i+1)*q], z[i*q:(i+1)*q])
	}
	s.d2 = linalg.Resize(s.d2, n*m)
	s.xx = linalg.Resize(s.xx, n)
	if cap(s.fast) < chunks {
		s.fast = make([]bool, chunks)
	}
	s.fast = s.fast[:chunks]
}

// psi1Rows writes ψ1 (r×M) for the r certain inputs x (r×Q) by the product
// form, with their squared distances into d2 (r×M) and squared norms into
// xx (r), and reports true; it reports false, writing nothing but xx, when
// the rows are beyond isoGemmLimit (the caller then runs psi1 per row).
func (k *RBFIso) psi1Rows(psi1, d2, xx, x []float64, r int, s *isoRows) bool {
	q, m := k.InputDim(), len(s.zz)
	l := k.Lengthscale()
	h := 0.5 / (l * l)
	var xmax float64
	for i := range r {
		xx[i] = linalg.Dot(x[i*q:(i+1)*q], x[i*q:(i+1)*q])
		xmax = max(xmax, xx[i])
	}
	var zmax float64
	for _, v := range s.zz {
		zmax = max(zmax, v)
	}
	if !(h*(xmax+zmax) <= isoGemmLimit) {
		return false
	}
	d2 = d2[:r*m]
	mm(d2, r, m, q, x, false, s.zT, false, -2, 0)
	for i := range r {
		row := d2[i*m : (i+1)*m]
		p := psi1[i*m : (i+1)*m]
		for j, zz := range s.zz {
			// Rounding can take a distance near zero below it.
			v := max(row[j]+xx[i]+zz, 0)
			row[j] = v
			p[j] = -h * v
		}
	}
	expAll(psi1[:r*m])
	for i := range psi1[:r*m] {
		psi1[i] *= k.ard.Variance
	}
	return true
}

// isoGradRows is the block of rows of psi1GradRows's product: 32 rows of
// 560 pixels are 140 KB.
const isoGradRows = 32

// psi1GradRows is psi1Grad, with psi0Grad's g0 per row, for r certain
// inputs x (r×Q) whose ψ1 and d2 came from psi1Rows: it adds into dZ (M×Q)
// and dParams. c (r×M) is scratch.
func (k *RBFIso) psi1GradRows(g, psi1, d2, x []float64, r int, z []float64, g0 float64, c, dZ, dParams []float64) {
	q := k.InputDim()
	m := len(z) / q
	l := k.Lengthscale()
	il2 := 1 / (l * l)
	var sv, sl float64
	colSum := make([]float64, m)
	for i := range r {
		gi, pi, di, ci := g[i*m:(i+1)*m], psi1[i*m:(i+1)*m], d2[i*m:(i+1)*m], c[i*m:(i+1)*m]
		for j := range m {
			v := gi[j] * pi[j]
			ci[j] = v
			colSum[j] += v
			sl += v * di[j]
		}
	}
	for _, v := range colSum {
		sv += v
	}
	// dZ_m += Σ_n c_nm (x_n − z_m)/ℓ² = (Cᵀ·X)_m/ℓ² − (Σ_n c_nm) z_m/ℓ²,
	// Cᵀ·X by blocks of isoGradRows rows of X, which stay in the cache
	// while the kernel passes over them once for every 4 rows of Cᵀ.
	for i0 := 0; i0 < r; i0 += isoGradRows {
		i1 := min(r, i0+isoGradRows)
		mm(dZ, m, q, i1-i0, c[i0*m:i1*m], true, x[i0*q:i1*q], false, il2, 1)
	}
	for j, s := range colSum {
		if s == 0 {
			continue
		}
		t := -il2 * s
		dz, zj := dZ[j*q:(j+1)*q], z[j*q:(j+1)*q]
		for i, v := range zj {
			dz[i] += t * v
		}
	}
	dParams[0] += sv/k.ard.Variance + g0*float64(r)
	dParams[1] += sl * il2 / l
}
