package engine

import (
	"math"
	"testing"
	"time"
)

// refCollapsed is the collapsed bound in big floats at the parameters p,
// from the reference state st (the layers below the last, and the last
// layer's ψ statistics and compression, which do not involve its q(u)):
//
//	−ND/2·log(2πs²) − Σ_d y_dᵀy_d/(2s²) + Σ_d ‖W'·Ψ1ᵀy_d‖²/(2s⁴)
//	− D/2·(log|A| − log|K|),  A = K + Φ/s² = L'·L'ᵀ, W' = L'⁻¹,
//
// Φ = Σ_n Ψ2_n (Σ_n ψ1_nᵀψ1_n for a certain input).
func (r *refModel) refCollapsed(p []bf, st *refState) bf {
	nl := len(r.shape)
	lp := r.params(nl-1, p)
	ps := st.psi[nl-1]
	bound := bnew().Neg(st.outs[nl-1].comp)
	for _, o := range st.outs[:nl-1] {
		bound.Sub(bound, badd(o.kl, badd(o.comp, o.prop)))
	}
	m, d, n := len(lp.z), len(r.y[0]), len(r.y)
	inv := bquo(bfl(1), lp.noise)
	a := bigKuu(&lp, r.jitter, false)
	for i := range n {
		for j := range m {
			for k := range m {
				var v bf
				if ps.psi2 != nil {
					v = ps.psi2[i][j][k]
				} else {
					v = bmul(ps.psi1[i][j], ps.psi1[i][k])
				}
				a[j][k] = badd(a[j][k], bmul(v, inv))
			}
		}
	}
	chol, w := bigCholInverse(a)
	prod := bfl(1)
	for j := range m {
		prod = bmul(prod, bmul(chol[j][j], chol[j][j]))
	}
	yy, quad := bnew(), bnew()
	for k := range d {
		py := make([]bf, m) // Ψ1ᵀy_d
		for j := range m {
			s := bnew()
			for i := range n {
				bacc(s, ps.psi1[i][j], r.y[i][k])
			}
			py[j] = s
		}
		for j := range m {
			s := bnew()
			for c := 0; c <= j; c++ {
				bacc(s, w[j][c], py[c])
			}
			bacc(quad, s, s)
		}
		for i := range n {
			bacc(yy, r.y[i][k], r.y[i][k])
		}
	}
	half := bfl(0.5)
	bound.Sub(bound, bmul(bfl(0.5*float64(n*d)), blog(bmul(bmul(bfl(2), bpi), lp.noise))))
	bound.Sub(bound, bmul(bmul(half, inv), yy))
	bound.Add(bound, bmul(bmul(half, bmul(inv, inv)), quad))
	bound.Sub(bound, bmul(bfl(0.5*float64(d)), bsub(blog(prod), ps.logdet)))
	return bound
}

// The collapsed gradient is the uncollapsed one at the computed optimum,
// so it inherits the engine's absolute errors there, which the
// conditioning sets (precision_test.go), while its own scale may be far
// smaller: at the fitted step3 model the final layer's inducing inputs
// have a collapsed gradient of 0.0073 against 0.62 at the file's q(u),
// with the same absolute error (4.6e-7 against 2.5e-7 there; the
// uncollapsed gradient at the optimum is off by as much). A group's error
// is therefore measured against the larger of the two scales
// (collapsedScale) and allowed precisionTol.
//
// Measured (-refall, the three fixtures, max): every group of the certain
// input ≤ 1.8e-8; of the uncertain inputs: kernel ≤ 8.0e-9, noise ≤ 5.2e-9,
// inducing ≤ 7.4e-7, q_mu ≤ 1.9e-8, q_sqrt ≤ 3.4e-8 (the hidden layers';
// the final layer's q(u) has no gradient). The bound: rel err 4.6e-12,
// 2.1e-11 and 2.5e-10, as at the files' q(u).
var collapsedTol = precisionTol

// TestPrecisionCollapsed measures the bound and gradient of evaluations
// with OptimalFinalQ against the 128-bit reference of the collapsed bound
// on the fitted fixtures (cond(Kuu) up to ~1e7): the bound to 1e-9
// relative, the gradient groups to collapsedTol. The reference's
// differences of the collapsed bound re-optimise q(u) at every point, so
// they check the envelope theorem where the conditioning bites.
func TestPrecisionCollapsed(t *testing.T) {
	for _, path := range precisionFixtures {
		mf, err := readFixture(path)
		if err != nil {
			t.Fatal(err)
		}
		m := mf.Model
		start := time.Now()
		r, p, b, st := refBound(m)
		want := r.refCollapsed(p, st)
		res, g := mustEval(t, m, Options{Gradient: true, OptimalFinalQ: true})
		rel := math.Abs(res.Bound-bf64(want)) / math.Abs(bf64(want))
		t.Logf("%s: collapsed bound %.15g, reference %.15g (at the model's q(u) %.15g), rel err %.2e", path, res.Bound, bf64(want), bf64(b), rel)
		if rel > 1e-9 {
			t.Errorf("%s: collapsed bound %.15g, reference %.15g, rel err %.2e > 1e-9", path, res.Bound, bf64(want), rel)
		}
		if bf64(want) < bf64(b) {
			t.Errorf("%s: reference collapsed bound %.15g below the bound at the model's q(u) %.15g", path, bf64(want), bf64(b))
		}
		if !refGradients() {
			continue
		}
		which := refParams(r, g)
		if which == nil {
			for k := range p {
				which = append(which, k)
			}
		}
		// The final layer's q(u) is no parameter of the collapsed bound.
		groups, last := groupsOf(r), len(r.shape)-1
		keep := which[:0:0]
		for _, k := range which {
			if r.layerOf(k) == last && (groups[k] == GroupQMu || groups[k] == GroupQSqrt) {
				continue
			}
			keep = append(keep, k)
		}
		ref := refGradientOf(r, p, st, -40, keep, func(_ bf, p []bf, st *refState) bf { return r.refCollapsed(p, st) })
		t.Logf("%s: reference gradient in %v", path, time.Since(start).Round(time.Millisecond))
		_, gOwn := mustEval(t, m, Options{Gradient: true})
		own := groupErrors(r, gOwn.Flatten(nil), gOwn.Flatten(nil)) // their scales
		for i, e := range groupErrors(r, g.Flatten(nil), ref) {
			if math.IsNaN(e.err) {
				continue // the final layer's q(u)
			}
			if s := own[i].scale; s > e.scale {
				e.err *= e.scale / s
				e.scale = s
			}
			t.Logf("%s: %v", path, e)
			tol := collapsedTol[e.layer > 0][e.group]
			if !useSIMD {
				tol *= purePairLoopFactor
			}
			if e.err > tol {
				t.Errorf("%s: %v > %g", path, e, tol)
			}
		}
	}
}
