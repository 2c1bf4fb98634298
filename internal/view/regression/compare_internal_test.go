package regression

import (
	"math"
	"testing"
)

// TestDepthShape: the depth comparison's measures against closed forms —
// a step's levels are the means of its two sides; a linear ramp from 0 to
// 1 over [0.2, 0.6] rises 10–90 % over 0.8 of its 0.4; a curve that peaks
// at 1.05 overshoots the levels [0, 1] by 0.05, and one inside them by a
// negative amount.
func TestDepthShape(t *testing.T) {
	lv := levels([]float64{-0.1, 0.1, 0, 0.9, 1.1, 1.0, 1.0})
	if math.Abs(lv[0]) > 1e-12 || math.Abs(lv[1]-1) > 1e-12 {
		t.Errorf("levels %v, want the sides' means [0, 1]", lv)
	}
	const n = 401
	x, ramp, bump, inside := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(i) / (n - 1)
		ramp[i] = math.Min(1, math.Max(0, (x[i]-0.2)/0.4))
		bump[i] = ramp[i] + 0.05*math.Exp(-math.Pow((x[i]-0.7)/0.05, 2))
		inside[i] = 0.02 + 0.96*ramp[i]
	}
	if w, ok := riseWidth(x, ramp, 0, 1, [2]float64{0, 1}); !ok || math.Abs(w-0.32) > 1e-9 {
		t.Errorf("the ramp's rise width %v (%v), want 0.8 × 0.4 = 0.32", w, ok)
	}
	if o := overshoot(x, bump, 0, 1, [2]float64{0, 1}); math.Abs(o-0.05) > 1e-3 {
		t.Errorf("the bump's overshoot %v, want 0.05", o)
	}
	if o := overshoot(x, inside, 0, 1, [2]float64{0, 1}); math.Abs(o+0.02) > 1e-9 {
		t.Errorf("a curve inside the levels overshoots by %v, want −0.02", o)
	}
	// Beyond the data's inputs the curve is not judged.
	if o := overshoot(x, bump, 0, 0.5, [2]float64{0, 1}); o > 0 {
		t.Errorf("overshoot %v counted beyond the inputs", o)
	}
}
