package engine

import (
	"math"
	"testing"
)

// TestNoCompensation: on the fitted fixtures, whose ill-conditioned
// layers sum ΣΨ2 exactly and whiten it in compensated arithmetic, the
// option turns both off, and the float64 path's bound is within what
// Options.NoCompensation states of the big-float reference (measured
// 6.7e-11, 2.6e-10 and 1.7e-9 of it; the default path's 6e-12 to 2.5e-10).
// Its gradient is compared with the default path's, itself checked
// against the reference (precision_test.go): measured 7.7e-7, 2.5e-5 and
// 4.8e-6 of its largest entry.
func TestNoCompensation(t *testing.T) {
	fixtures := precisionFixtures
	if testing.Short() || raceBuild {
		fixtures = fixtures[1:2] // a big-float bound takes seconds, ten times that under -race
	}
	for _, path := range fixtures {
		mf, err := readFixture(path)
		if err != nil {
			t.Fatal(err)
		}
		m := mf.Model
		_, _, ref, _ := refBound(m)
		b := bf64(ref)
		var exact, plain Evaluator
		re, ge, err := exact.Evaluate(m, Options{Gradient: true})
		if err != nil {
			t.Fatal(err)
		}
		rp, gp, err := plain.Evaluate(m, Options{Gradient: true, NoCompensation: true})
		if err != nil {
			t.Fatal(err)
		}
		var on bool
		for i, w := range exact.layers[:len(m.Layers)] {
			on = on || w.compensate
			if plain.layers[i].compensate {
				t.Errorf("%s: layer %d compensates with NoCompensation", path, i+1)
			}
		}
		if !on {
			t.Fatalf("%s: no layer compensates by default: the fixture tests nothing", path)
		}
		errExact, errPlain := math.Abs(re.Bound-b)/math.Abs(b), math.Abs(rp.Bound-b)/math.Abs(b)
		ve, vp := ge.Flatten(nil), gp.Flatten(nil)
		var scale, diff float64
		for i := range ve {
			scale = max(scale, math.Abs(ve[i]))
			diff = max(diff, math.Abs(vp[i]-ve[i]))
		}
		t.Logf("%s: bound off by %.2e of it by default, %.2e with NoCompensation; gradient %.2e of its largest entry from the default's", path, errExact, errPlain, diff/scale)
		if !(errPlain <= 1e-8) {
			t.Errorf("%s: NoCompensation's bound off by %.3g of it, want ≤ 1e-8", path, errPlain)
		}
		if !(diff <= 1e-4*scale) {
			t.Errorf("%s: NoCompensation's gradient off the default's by %.3g of its largest entry, want ≤ 1e-4", path, diff/scale)
		}
	}
}
