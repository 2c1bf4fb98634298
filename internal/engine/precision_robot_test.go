package engine

import (
	"flag"
	"math"
	"testing"
	"time"
)

var refRobot = flag.String("refrobot", "", "precision tests: a fitted robot-shaped model file to measure (slow: minutes)")

// fittedModel is a fitted model file and its model.
type fittedModel struct {
	path  string
	model *Model
}

// fittedModels reads the precision fixtures and the -refrobot model.
func fittedModels(tb testing.TB) []fittedModel {
	paths := precisionFixtures
	if *refRobot != "" {
		paths = append(paths[:len(paths):len(paths)], *refRobot)
	}
	var out []fittedModel
	for _, path := range paths {
		mf, err := readFixture(path)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, fittedModel{path, mf.Model})
	}
	return out
}

// TestPrecisionRobot measures a fitted robot-shaped model (time → 3 → 3 →
// 30, N = 215) against the reference: the bound, and a small sample of
// each gradient group (one big-float evaluation takes seconds). Run with
// -refrobot PATH.
//
// On `viz fit -data robot:…/uw-floor.txt -hidden 3,3 -inducing 15
// -iters 1500 -seed 1` (cond₁(Kuu) 1.4e8, 5e7, 2.7e4) it measured: bound
// 3.9e-11 (1.9e-9 with float64 Ψ2 entries, 5.5e-8 before the compensated
// ΣΨ2 and its compensated whitening); the outer layers every group ≤
// 3.8e-7; the middle layer kernel 4.5e-10 (1.5e-5 with the kernel
// parameters' Ψ2 and ψ1 parts contracted with the explicit weights; 1.6e-5;
// 6.9e-4), noise 1.4e-9 (2.2e-6; 6.1e-5), inducing 2.8e-8 (4.6e-6;
// 2.6e-4), q_mu 3.0e-8 (2.4e-5; 2.7e-3), q_sqrt 8.7e-11 (1.3e-5; 2.5e-3).
// Its variance's gradient, 0.76, is what is left of pieces of ±3e5 (the
// Kuu, ψ1 and Ψ2 parts); with the explicit weights in float64, even
// correctly rounded, its Ψ2 part alone was off by 2e-5.
func TestPrecisionRobot(t *testing.T) {
	if *refRobot == "" {
		t.Skip("no -refrobot model")
	}
	mf, err := readFixture(*refRobot)
	if err != nil {
		t.Fatal(err)
	}
	m := mf.Model
	t.Logf("jitter %g, cond₁(Kuu) per layer %.2g", m.Jitter, condKuu(t, m))
	start := time.Now()
	r, p, b, st := refBound(m)
	t.Logf("reference bound in %v", time.Since(start).Round(time.Millisecond))
	res, g := mustEval(t, m, Options{Gradient: true})
	t.Logf("bound %.15g, reference %.15g, rel err %.2e", res.Bound, bf64(b), math.Abs(res.Bound-bf64(b))/math.Abs(bf64(b)))
	t.Logf("abs err: likelihood %.2e", res.Likelihood-bf64(st.lik))
	for i, o := range st.outs {
		l := res.Layers[i]
		t.Logf("  layer %d: kl %.2e, compression %.2e, propagation %.2e", i, l.KL-bf64(o.kl), l.Compression-bf64(o.comp), l.Propagation-bf64(o.prop))
	}
	if testing.Short() {
		return
	}
	ref := refGradient(r, p, st, -40, sampleParams(r, g.Flatten(nil), 1))
	for _, e := range groupErrors(r, g.Flatten(nil), ref) {
		t.Logf("%v", e)
	}
}
