package engine

import (
	"flag"
	"math"
	"testing"
	"time"
)

var refRobot = flag.String("refrobot", "", "precision tests: a fitted robot-shaped model file to measure (slow: minutes)")

// TestPrecisionRobot measures a fitted robot-shaped model (time → 3 → 3 →
// 30, N = 215) against the reference: the bound, and a small sample of
// each gradient group (one big-float evaluation takes seconds). Run with
// -refrobot PATH.
func TestPrecisionRobot(t *testing.T) {
	if *refRobot == "" {
		t.Skip("no -refrobot model")
	}
	mf, err := ReadModelFile(*refRobot)
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
