package montecarlo

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// TestPredictiveOneLayer: for a one-layer GP the Gaussian final message
// is exact, so the Monte Carlo density at each input must have its mean
// and variance (within Monte Carlo error) and one mode; each column
// integrates to about 1.
func TestPredictiveOneLayer(t *testing.T) {
	m := engine.StepModel(12)
	xs := []float64{-1, -0.5, 0, 0.3, 1}
	const samples = 4000
	p, err := Predictive(m, xs, 0, samples, 60, 1)
	if err != nil {
		t.Fatal(err)
	}
	var ev engine.Evaluator
	msgs, err := ev.Predict(m, colVec(xs))
	if err != nil {
		t.Fatal(err)
	}
	B := len(p.Edges) - 1
	w := p.Edges[1] - p.Edges[0]
	for i := range xs {
		var mass, mean, sq float64
		for b := range B {
			c := 0.5 * (p.Edges[b] + p.Edges[b+1])
			d := p.Density[i*B+b] * w
			mass += d
			mean += d * c
			sq += d * c * c
		}
		mean /= mass
		vr := sq/mass - mean*mean
		wantM, wantV := msgs[0].Mean.At(i, 0), msgs[0].Var.At(i, 0)
		// 5 standard errors of the mean, and the binning's w²/12 plus 15 %
		// for the variance (a histogram of 4000 samples).
		if math.Abs(mean-wantM) > 5*math.Sqrt(wantV/samples)+w/2 || math.Abs(vr-wantV) > 0.15*wantV+w*w/12 {
			t.Errorf("x=%v: MC mean %.4f var %.4f, message %.4f %.4f", xs[i], mean, vr, wantM, wantV)
		}
		if mass < 0.97 || mass > 1.0001 {
			t.Errorf("x=%v: density integrates to %v", xs[i], mass)
		}
		if p.Modes[i] != 1 {
			t.Errorf("x=%v: %d modes of a Gaussian", xs[i], p.Modes[i])
		}
	}
}

// TestModes: a Gaussian has one mode, a well-separated mixture two, a
// bump of 3 % none of its own.
func TestModes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	hist := func(draw func() float64) []float64 {
		c := make([]float64, 60)
		for range 20000 {
			if b := int((draw() + 6) / 12 * 60); b >= 0 && b < 60 {
				c[b]++
			}
		}
		return c
	}
	if n := modes(hist(rng.NormFloat64)); n != 1 {
		t.Errorf("a Gaussian: %d modes", n)
	}
	mix := func() float64 {
		if rng.Float64() < 0.5 {
			return -3 + 0.6*rng.NormFloat64()
		}
		return 3 + 0.6*rng.NormFloat64()
	}
	if n := modes(hist(mix)); n != 2 {
		t.Errorf("a mixture at ±3: %d modes", n)
	}
	small := func() float64 {
		if rng.Float64() < 0.03 {
			return 4 + 0.3*rng.NormFloat64()
		}
		return rng.NormFloat64()
	}
	if n := modes(hist(small)); n != 1 {
		t.Errorf("a Gaussian with a 3 %% bump: %d modes", n)
	}
	if n := modes(make([]float64, 10)); n != 0 {
		t.Errorf("an empty histogram: %d modes", n)
	}
}

// TestPredictiveBadRequests: every bad request is an error, not a panic.
func TestPredictiveBadRequests(t *testing.T) {
	m := engine.StepModel(8)
	for _, tc := range []struct {
		xs                 []float64
		dim, samples, bins int
	}{
		{[]float64{0}, 0, 100, 10},
		{[]float64{0, 1}, 1, 100, 10},
		{[]float64{0, 1}, 0, 5, 10},
		{[]float64{0, 1}, 0, 100, 1},
		{[]float64{0, math.NaN()}, 0, 100, 10},
		{make([]float64, MaxPredictiveInputs+1), 0, 100, 10},
	} {
		if _, err := Predictive(m, tc.xs, tc.dim, tc.samples, tc.bins, 1); err == nil {
			t.Errorf("%+v accepted", tc)
		}
	}
	if _, err := Predictive(nil, []float64{0, 1}, 0, 100, 10, 1); err == nil {
		t.Error("nil model accepted")
	}
}

func colVec(v []float64) *mat.Dense { return mat.NewDense(len(v), 1, slices.Clone(v)) }
