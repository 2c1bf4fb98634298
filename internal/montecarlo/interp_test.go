package montecarlo

import (
	"dgpviz/internal/engine"
	"math"
	"math/rand/v2"
	"testing"
)

// TestHermiteMatchesExact draws the message figure's samples through the
// interpolation table and through the exact path with the same random
// streams and checks that no sample moves by more than the documented
// bound, for the step model (M = 12 and 20) and random 1-D RBF layers.
func TestHermiteMatchesExact(t *testing.T) {
	cases := []struct {
		name string
		l    *Layer
	}{
		{"step12", mustLayer(t, engine.StepModel(12).Layers[0], 1e-6)},
		{"step20", mustLayer(t, engine.StepModel(20).Layers[0], 1e-6)},
	}
	for s := uint64(1); s <= 3; s++ {
		m := engine.RandomModel(rand.New(rand.NewPCG(s, 9)), 10, []int{1, 1}, []string{"rbf"}, 15)
		cases = append(cases, struct {
			name string
			l    *Layer
		}{"random", mustLayer(t, m.Layers[0], m.Jitter)})
	}
	mu := []float64{-0.5, 0, 1.6, 0}
	sv := []float64{0.01, 0.04, 0.01, 0.5}
	for _, c := range cases {
		const samples = 4000
		opt := Options{Samples: samples, Seed: 3}
		fast := newJob([]*Layer{c.l}, mu, sv, 4, 1, opt)
		fast.figureTable()
		tab := fast.plans[0].tab
		if tab == nil {
			t.Fatalf("%s: no interpolation table", c.name)
		}
		fast.store = [][]float64{make([]float64, 4*samples)}
		fast.run()
		// The reference: the same random streams, with the mean and
		// variance at each x from Layer.conditional (Cholesky-based).
		ref := make([]float64, 4*samples)
		dr := newDrawer(fast.plans, 1)
		kx, v, mean, varU := make([]float64, c.l.m), make([]float64, c.l.m), make([]float64, 1), make([]float64, 1)
		for it := 0; it < 4*fast.chunks; it++ {
			in, ch := it/fast.chunks, it%fast.chunks
			dr.seed(opt.Seed, it)
			for k := ch * ChunkSize; k < min(samples, (ch+1)*ChunkSize); k++ {
				x := mu[in] + math.Sqrt(sv[in])*dr.rng.NormFloat64()
				vc := c.l.conditional([]float64{x}, kx, v, mean, varU, true)
				ref[in*samples+k] = mean[0] + math.Sqrt(vc+varU[0]+c.l.noise)*dr.rng.NormFloat64()
			}
		}
		// 1e-9: rounding in the reference (Kuu with jitter 1e-6 is badly
		// conditioned), far below the interpolation bound.
		bound := tab.errMean + 6*math.Min(math.Sqrt(tab.errVar), tab.errVar/math.Sqrt(c.l.noise)) + 1e-9
		if bound > 1e-4 { // vs a Monte Carlo error of ≈ 7e-3 sd at 20,000 samples
			t.Errorf("%s: bound %g is not small (errMean %g, errVar %g, %d points)", c.name, bound, tab.errMean, tab.errVar, tab.n)
		}
		var worst float64
		for i, e := range ref {
			worst = math.Max(worst, math.Abs(e-fast.store[0][i]))
		}
		if worst > bound {
			t.Errorf("%s: largest sample difference %g exceeds the bound %g", c.name, worst, bound)
		}
		// The exact sampler (kᵀ(B − Kuu⁻¹)k with Kuu⁻¹ itself) agrees up
		// to its own rounding.
		exact := newJob([]*Layer{c.l}, mu, sv, 4, 1, opt)
		exact.store = [][]float64{make([]float64, 4*samples)}
		exact.run()
		var worstExact float64
		for i, e := range exact.store[0] {
			worstExact = math.Max(worstExact, math.Abs(e-fast.store[0][i]))
		}
		if worstExact > 1e-3 || worstExact == 0 {
			t.Errorf("%s: exact and interpolated samples differ by up to %g", c.name, worstExact)
		}
		t.Logf("%s: %d table points, bound %.2g, largest difference %.2g from the reference, %.2g from the exact sampler", c.name, tab.n, bound, worst, worstExact)
	}
}

// TestHermiteTableEval checks the interpolant against the exact functions
// at random points, including the table's ends, and that it refuses
// points outside.
func TestHermiteTableEval(t *testing.T) {
	l := mustLayer(t, engine.StepModel(20).Layers[0], 1e-6)
	p := newPlan(l, &Options{})
	tab := newHermite(p, -3, 3)
	if tab == nil {
		t.Fatal("no table")
	}
	kx, v := make([]float64, l.m), make([]float64, l.m)
	mean, varU := make([]float64, 1), make([]float64, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		x := -3 + 6*rng.Float64()
		if i == 0 {
			x = -3
		} else if i == 1 {
			x = 3
		}
		gm, gv, ok := tab.eval(x)
		if !ok {
			t.Fatalf("x = %v refused", x)
		}
		vc := l.conditional([]float64{x}, kx, v, mean, varU, true)
		if d := math.Abs(gm - mean[0]); d > tab.errMean+1e-10 { // 1e-10: rounding
			t.Errorf("x = %v: mean %v, exact %v (bound %g)", x, gm, mean[0], tab.errMean)
		}
		if d := math.Abs(gv - (vc + varU[0])); d > tab.errVar+1e-9 {
			t.Errorf("x = %v: var %v, exact %v (bound %g)", x, gv, vc+varU[0], tab.errVar)
		}
	}
	for _, x := range []float64{-3.0001, 3.0001, math.NaN(), math.Inf(1)} {
		if _, _, ok := tab.eval(x); ok {
			t.Errorf("x = %v accepted outside the table", x)
		}
	}
}
