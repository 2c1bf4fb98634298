package engine

import (
	"flag"
	"math"
	"testing"
	"time"
)

// precisionFixtures are fitted models as `viz fit` writes them, at the
// default jitter 1e-6, where Kuu is badly conditioned (issue 13, item 2).
var precisionFixtures = []string{
	"testdata/step2_fitted.json", // viz fit -data step -hidden 1 -seed 1 -restarts 1
	"testdata/step3_fitted.json", // viz fit -data step -hidden 1,1 -inducing 12 -seed 1
	// viz fit -data step -hidden 1,1 -inducing 15 -seed 1 -restarts 1
	// -iters 20000: L-BFGS stopped "stationary" at −0.621 after 3555
	// iterations, gradient ∞-norm 1.98.
	"testdata/step3_stalled.json",
}

var refAll = flag.Bool("refall", false, "precision tests: difference every parameter, not a sample per group")

// refParams is the parameters whose reference gradient the tests compute:
// all with -refall, else a sample per group (sampleParams).
func refParams(r *refModel, g *Gradient) []int {
	if *refAll {
		return nil
	}
	return sampleParams(r, g.Flatten(nil), 6)
}

// refGradients says whether the precision tests difference the big-float
// reference: not in the short tier, nor under the race detector
// (race_on_test.go), where they check the bound only; README's test
// command runs them without it (-run 'TestPrecision|TestReference').
func refGradients() bool { return !testing.Short() && !raceBuild }

func condKuu(t *testing.T, m *Model) []float64 {
	var out []float64
	for _, l := range m.Layers {
		var w layerWork
		if err := w.prepare(l, m.Jitter, 1, false); err != nil {
			t.Fatal(err)
		}
		// ‖Kuu‖₁‖Kuu⁻¹‖₁, enough to show the order of magnitude.
		n1 := func(a []float64) float64 {
			var best float64
			for j := 0; j < w.m; j++ {
				var s float64
				for i := 0; i < w.m; i++ {
					s += math.Abs(a[i*w.m+j])
				}
				best = math.Max(best, s)
			}
			return best
		}
		out = append(out, n1(w.kuu)*n1(w.kinv))
	}
	return out
}

// TestReferenceAgreesWellConditioned checks the big-float reference itself:
// with jitter 1e-2 every Kuu is well conditioned, and the engine and the
// reference — two independent implementations of the definitions — must
// agree to near float64's precision. (The issue reports 3e-10 agreement
// with the authors' code at jitter 1e-3; 1e-2 leaves more margin.)
func TestReferenceAgreesWellConditioned(t *testing.T) {
	for _, path := range precisionFixtures {
		mf, err := readFixture(path)
		if err != nil {
			t.Fatal(err)
		}
		m := mf.Model
		m.Jitter = 1e-2
		r, p, b, st := refBound(m)
		res, g := mustEval(t, m, Options{Gradient: true})
		// float64 rounding of the O(1e3) terms that make up a bound of O(1):
		// a few hundred ulps of 1e3 is ~1e-11 absolute.
		if d := math.Abs(res.Bound - bf64(b)); d > 1e-10*math.Max(1, math.Abs(bf64(b))) {
			t.Errorf("%s: engine bound %.15g, reference %.15g (diff %.2g)", path, res.Bound, bf64(b), d)
		}
		if !refGradients() || path != precisionFixtures[0] {
			continue // the gradients of one model suffice to check the reference
		}
		ref := refGradient(r, p, st, -40, refParams(r, g))
		for _, e := range groupErrors(r, g.Flatten(nil), ref) {
			t.Logf("%s jitter 1e-2: %v", path, e)
			// At cond(Kuu) ≈ 1e3 the engine's gradient is good to ~1e-12 of
			// its group's scale; 1e-8 leaves margin for the step.
			if e.err > 1e-8 {
				t.Errorf("%s: %v", path, e)
			}
		}
	}
}

// TestReferenceStep checks the reference's differences themselves, on the
// worst-conditioned fixture: steps 2^-40 and 2^-46 agree to far below the
// tolerances they are used for.
func TestReferenceStep(t *testing.T) {
	if !refGradients() {
		t.Skip("big-float gradients take seconds, ten times that under the race detector: not in the short tier or under -race (go test -count=1 -run 'TestPrecision|TestReference' ./internal/engine)")
	}
	mf, err := readFixture(precisionFixtures[len(precisionFixtures)-1])
	if err != nil {
		t.Fatal(err)
	}
	r, p, _, st := refBound(mf.Model)
	_, g := mustEval(t, mf.Model, Options{Gradient: true})
	which := sampleParams(r, g.Flatten(nil), 3)
	g1 := refGradient(r, p, st, -40, which)
	g2 := refGradient(r, p, st, -46, which)
	for _, e := range groupErrors(r, g1, g2) {
		// The reference must be good to much better than the 1e-6 asked
		// of the engine.
		if e.err > 1e-12 {
			t.Errorf("step 2^-40 vs 2^-46: %v", e)
		}
	}
}

// precisionTol is the error allowed, relative to its group's scale, of a
// gradient group of a layer with a certain input (the first) or an
// uncertain one: the target, 1e-6, for every group. Measured with
// -refall (every parameter differenced) on the three fixtures, max over
// them; in parentheses before the kernel parameters' Ψ2 and ψ1 parts were
// contracted in whitened form (rbfPsi2.paramSums, backward's whitened
// ∂/∂ψ1), before ΣΨ2 was summed from double-double entries
// (rbfPsi2.sumExact), before the compensated ΣΨ2, its compensated
// whitening and the backward pass's whitened sums (commit cb8f76b), and
// before the whitened formulation (commit ee71642):
//
//	certain input:   every group ≤ 3.2e-8 (3.2e-8; 3.2e-8; 3.2e-8; inducing 8.4e-2, noise 3.1e-4)
//	uncertain input: kernel ≤ 1.4e-8 (4.7e-7; 6.4e-6; 3.1e-5; 3.6e-5),
//	                 noise ≤ 6.3e-8 (6.3e-8; 1.5e-7; 2.7e-7; 7.4e-4),
//	                 inducing ≤ 4.0e-7 (4.0e-7; 1.6e-6; 7.4e-6; 4.0e-3),
//	                 q_mu ≤ 2.8e-7 (2.8e-7; 1.8e-6; 6.4e-6; 1.2e-5),
//	                 q_sqrt ≤ 1.9e-7 (1.9e-7; 9.6e-5; 4.6e-4; 5.0e-3)
//
// The default run differences a sample per group (refParams), which finds
// errors up to ~3× smaller. The uncertain layers had lost their digits to
// the float64 rounding of the per-datum Ψ2 entries (~1 ulp each,
// independent, so not a backward error in the parameters — the exact
// gradient moves ≤ 2e-10 when every parameter moves by ±1 ulp) amplified
// by ~cond(Kuu) in W·ΣΨ2·Wᵀ (diagnose_test.go, -diag): with correctly
// rounded entries summed and whitened exactly the last layer's q_sqrt
// error was still 1.6e-5; and the kernel parameters' to the contractions
// with the explicit gradient weights Kinv·(…)·Kinv, whose float64 entries
// are ~cond(Kuu) times the result's scale.
//
// The Go pair loop (-tags purego, or a CPU without AVX2 and FMA) rounds
// its exponents unfused, and its float64 entries' errors differ; its
// tolerances are precisionTol's × purePairLoopFactor.
var precisionTol = map[bool]map[Group]float64{
	false: {GroupKernel: 1e-7, GroupNoise: 1e-7, GroupInducing: 1e-7, GroupQMu: 1e-7, GroupQSqrt: 1e-7},
	true:  {GroupKernel: 1e-6, GroupNoise: 1e-6, GroupInducing: 1e-6, GroupQMu: 1e-6, GroupQSqrt: 1e-6},
}

// purePairLoopFactor widens precisionTol for the Go pair loop.
const purePairLoopFactor = 2

// TestPrecisionFitted measures the engine against the reference on fitted
// models at the default jitter: the bound to 1e-9 relative, the issue's
// target (measured 6.3e-12, 2.1e-11 and 2.5e-10 with the assembly pair
// loop, 4.9e-12, 1.2e-11 and 1.5e-10 with the Go one; with float64 Ψ2
// entries 4.4e-11, 5.4e-11 and 4.1e-10; before the compensated ΣΨ2
// 6.7e-11, 2.6e-10 and 1.7e-9; before the whitened formulation 8.7e-9,
// 2.9e-7 and 8.4e-6) and the gradient groups to precisionTol.
func TestPrecisionFitted(t *testing.T) {
	for _, path := range precisionFixtures {
		mf, err := readFixture(path)
		if err != nil {
			t.Fatal(err)
		}
		m := mf.Model
		t.Logf("%s: jitter %g, cond₁(Kuu) per layer %.2g", path, m.Jitter, condKuu(t, m))
		start := time.Now()
		r, p, b, st := refBound(m)
		res, g := mustEval(t, m, Options{Gradient: true})
		rel := math.Abs(res.Bound-bf64(b)) / math.Abs(bf64(b))
		t.Logf("%s: bound %.15g, reference %.15g, rel err %.2e", path, res.Bound, bf64(b), rel)
		if rel > 1e-9 {
			t.Errorf("%s: bound %.15g, reference %.15g, rel err %.2e > 1e-9", path, res.Bound, bf64(b), rel)
		}
		t.Logf("%s: abs err: likelihood %.2e", path, res.Likelihood-bf64(st.lik))
		for i, o := range st.outs {
			l := res.Layers[i]
			t.Logf("%s:   layer %d: kl %.2e, compression %.2e, propagation %.2e", path, i, l.KL-bf64(o.kl), l.Compression-bf64(o.comp), l.Propagation-bf64(o.prop))
		}
		if !refGradients() {
			continue
		}
		ref := refGradient(r, p, st, -40, refParams(r, g))
		t.Logf("%s: reference gradient in %v", path, time.Since(start).Round(time.Millisecond))
		for _, e := range groupErrors(r, g.Flatten(nil), ref) {
			t.Logf("%s: %v", path, e)
			tol := precisionTol[e.layer > 0][e.group]
			if !useSIMD {
				tol *= purePairLoopFactor
			}
			if e.err > tol {
				t.Errorf("%s: %v > %g", path, e, tol)
			}
		}
	}
}
