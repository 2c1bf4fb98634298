package engine

import (
	"fmt"
	"math"

	"dgpviz/internal/linalg"
)

// Kernel is a covariance function with analytic psi statistics under a
// Gaussian input. The implementations are *RBF, *RBFIso (which runs the
// RBF's loops) and *Linear; the set is closed because each needs hand-written, fused psi-statistic loops.
type Kernel interface {
	// Name is the kernel's type as written in model files: "rbf" or "linear".
	Name() string
	// InputDim is the number of input dimensions Q.
	InputDim() int
	// NumParams is the number of hyperparameters.
	NumParams() int
	// Params returns the hyperparameters in their natural (positive)
	// parametrisation, in the order of ParamNames.
	Params() []float64
	// SetParams sets the hyperparameters from p, in the order of Params.
	SetParams(p []float64)
	// ParamNames names each hyperparameter, e.g. "lengthscales[0]".
	ParamNames() []string
	// Eval returns k(a, b) for two points of length InputDim.
	Eval(a, b []float64) float64
	// Clone returns a deep copy.
	Clone() Kernel

	// covGrad accumulates into dZ (M×Q, row-major) and dParams the gradient
	// of Σ_{m,m'} G[m,m'] K[m,m'] where K = k(Z, Z) (without jitter).
	covGrad(z []float64, m int, kuu, g []float64, dZ, dParams []float64)
	// psi0 returns ψ0 = E[k(h,h)] under h ~ N(mu, diag s).
	psi0(mu, s []float64) float64
	// psi0Grad accumulates g·∂ψ0 into dMu, dS (nil for a certain input) and dParams.
	psi0Grad(g float64, mu, s []float64, dMu, dS, dParams []float64)
	// psi1 writes ψ1[m] = E[k(h, z_m)] for the M rows of z. tmp is
	// scratch of rowScratchLen(Q) floats (shorter, nil say: psi1
	// allocates its own).
	psi1(dst []float64, mu, s, z, tmp []float64)
	// psi1Grad accumulates Σ_m g[m]·∂ψ1[m] into dMu, dS (nil for a certain
	// input), dZ and dParams, given ψ1 from psi1; tmp as for psi1.
	psi1Grad(g, psi1 []float64, mu, s, z []float64, dMu, dS, dZ, dParams, tmp []float64)
	// newPsi2 prepares the Ψ2 loop for one layer evaluation. old, when
	// not nil, is a previous result that is no longer used: its storage
	// may be reused.
	newPsi2(z []float64, m int, old psi2Kernel) psi2Kernel
}

// psi2Kernel evaluates, datum by datum, the traces tr(W Ψ2_n) against two
// fixed matrices and the gradient of tr(G Ψ2_n), fused into one pass so
// that Ψ2_n (M×M per datum) is never stored.
type psi2Kernel interface {
	// setWeights fixes the matrices w1, w2 whose traces against Ψ2_n datum
	// returns, and the upstream gradient g = ∂bound/∂Ψ2_n (nil: no
	// gradient), all M×M symmetric, for the evaluation that follows.
	setWeights(g, w1, w2 []float64)
	// accLen is the length of a chunk accumulator's buffer.
	accLen() int
	// datum returns tr(w1 Ψ2_n) and tr(w2 Ψ2_n), adds Ψ2_n and the Z and
	// hyperparameter parts of the gradient of tr(G Ψ2_n) into acc, and
	// adds its input parts into dMu, dS. psi1 is ψ1_n.
	datum(acc *psi2Acc, mu, s, psi1, dMu, dS []float64) (t1, t2 float64)
	// sum writes Σ_n Ψ2_n of a reduced accumulator into dst (M×M).
	sum(acc *psi2Acc, dst []float64)
	// finish adds the gradient held by a reduced accumulator into dZ and
	// dParams.
	finish(acc *psi2Acc, dZ, dParams []float64)
	// quadPsi1 reports whether tr(G Ψ2_n) contains the term ψ1_n G ψ1_nᵀ
	// whose gradient the caller must add as 2 G ψ1_nᵀ (true for linear).
	quadPsi1() bool
}

// psi2ParamSums is a psi2Kernel that may leave the Ψ2 part of the kernel
// parameters' gradient to the layer's whitened contraction (rbfPsi2).
type psi2ParamSums interface {
	paramSums(acc *psi2Acc, sumHi, sumLo, hi, lo []float64, contract func(hi, lo []float64) float64, dParams []float64) bool
}

// psi2Merger is a psi2Kernel whose accumulators can hold ΣΨ2 in twice
// the working precision (setCompensated, before a data loop): merge adds
// src into dst, parts of two accumulators starting at offset off, a
// multiple of blockLen (Evaluator.reduce), and sum2 writes Σ_n Ψ2_n as
// an unevaluated sum hi + lo.
type psi2Merger interface {
	setCompensated(bool)
	blockLen() int
	merge(dst, src []float64, off int)
	sum2(acc *psi2Acc, hi, lo []float64)
}

// psi2Acc holds one chunk's sums of the Ψ2 loop, laid out by the kernel,
// and the chunk's per-datum scratch: kept with the sums, it is allocated
// once and not per datum at any input width.
type psi2Acc struct {
	buf   []float64
	tmp   []float64 // per-datum scratch of the kernel, not a sum
	row   []float64 // per-datum scratch of the kernel's own, O(Q)
	rowDD []dd      // the same in double-double
	dirty bool      // buf holds an earlier evaluation's sums
}

// scratch returns the accumulator's per-datum scratch with length n.
func (a *psi2Acc) scratch(n int) []float64 {
	a.tmp = linalg.Resize(a.tmp, n)
	return a.tmp
}

// rowFloats returns the per-datum scratch of length n.
func (a *psi2Acc) rowFloats(n int) []float64 {
	a.row = linalg.Resize(a.row, n)
	return a.row
}

// rowDDs returns the double-double per-datum scratch of length n.
func (a *psi2Acc) rowDDs(n int) []dd {
	a.rowDD = resizeDD(a.rowDD, n)
	return a.rowDD
}

// rowScratchLen is the length of the per-datum scratch that psi1 and
// psi1Grad take for input dimension q (RBFIso's psi1Grad of an uncertain
// input: its ARD gradient, 1+q, and the ARD loop's 2q).
func rowScratchLen(q int) int { return 1 + 3*q }

// rowScratch returns chunk's per-datum scratch for psi1 and psi1Grad
// from per-chunk storage rows (grown as needed, kept between
// evaluations). It is called serially, before a parallel region.
func rowScratch(rows [][]float64, chunks, n int) [][]float64 {
	for len(rows) < chunks {
		rows = append(rows, nil)
	}
	for c := range chunks {
		rows[c] = linalg.Resize(rows[c], n)
	}
	return rows
}

func (a *psi2Acc) reset() { clear(a.buf) }

// gradAcc holds one chunk's gradient sums of the backward pass.
type gradAcc struct {
	dZ, dParams []float64
	ds2         float64 // Σ of the upstream gradient w.r.t. the variances
}

func addTo(dst, src []float64) {
	for i, v := range src {
		dst[i] += v
	}
}

// NewKernel makes a kernel of the named type ("rbf", "rbfiso" or "linear") with input
// dimension q and default hyperparameters (unit variance and lengthscales).
func NewKernel(name string, q int) (Kernel, error) {
	if q < 1 {
		return nil, fmt.Errorf("kernel input dimension %d, want ≥ 1", q)
	}
	switch name {
	case "rbf":
		return NewRBF(1, ones(q)), nil
	case "linear":
		return NewLinear(ones(q)), nil
	case "rbfiso":
		return NewRBFIso(1, 1, q), nil
	}
	return nil, fmt.Errorf("unknown kernel type %q (want rbf, rbfiso or linear)", name)
}

func ones(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

// CovGrad accumulates into dZ (M×Q, row-major) and dParams (in the order of
// k.Params) the gradient of Σ_{m,m'} G[m,m'] K[m,m'], K = k(Z, Z) without
// jitter, for the M points z (row-major) and their covariance kuu = k(Z, Z).
// It is how a quantity defined through Kuu — the optimizer's whitened
// parametrisation, say — passes its gradient back to Z and the kernel.
func CovGrad(k Kernel, z []float64, m int, kuu, g []float64, dZ, dParams []float64) {
	k.covGrad(z, m, kuu, g, dZ, dParams)
}

// Cov fills dst (len(a)/Q × len(b)/Q, row-major) with k(a_i, b_j), where a
// and b hold points row-major.
func Cov(k Kernel, dst, a, b []float64) {
	q := k.InputDim()
	na, nb := len(a)/q, len(b)/q
	if len(dst) != na*nb {
		panic("engine: Cov dst has wrong size")
	}
	switch r := k.(type) {
	case *RBF:
		r.cov(dst, a, b)
		return
	case *RBFIso:
		r.ard.cov(dst, a, b)
		return
	}
	for i := 0; i < na; i++ {
		ai := a[i*q : (i+1)*q]
		for j := 0; j < nb; j++ {
			dst[i*nb+j] = k.Eval(ai, b[j*q:(j+1)*q])
		}
	}
}

func finitePositive(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
