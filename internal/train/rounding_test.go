package train

import (
	"math"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
)

// TestMinibatchRounding measures what a stochastic fit gives up by
// evaluating with engine.Options.NoCompensation, on the walk's start at
// 60 inducing points, where Kuu's conditioning (cond 1.2e7 in the middle
// layer) has the engine sum ΣΨ2 from double-double entries by default:
// a minibatch gradient's float64 rounding against the sampling spread of
// the gradients of disjoint minibatches, coordinate by coordinate
// (measured 5e-6 of it), and a check's bound against the exact one
// (measured 4e-10 of it, against the stopping rule's DefaultTol of 1e-6).
func TestMinibatchRounding(t *testing.T) {
	if testing.Short() {
		t.Skip("an initialisation of 4,096 rows at 60 inducing points: seconds, not in the short tier")
	}
	if raceBuild {
		t.Skip(secondPart)
	}
	const n, batch, batches = 4096, 1024, 4
	x, y := walkData(n, dataset.WalkBeacons, 1)
	x = dataset.FitNormalizer(x).Apply(x)
	y = dataset.FitNormalizer(y).Apply(y)
	m, err := Initialize(x, y, InitConfig{Hidden: []int{3, 3}, Inducing: 60, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var e engine.Evaluator
	grad := func(b int, plain bool) []float64 {
		rows := make([]int, batch)
		for i := range rows {
			rows[i] = b*batch + i
		}
		_, g, err := e.Evaluate(m, engine.Options{Gradient: true, Rows: rows, NoCompensation: plain})
		if err != nil {
			t.Fatal(err)
		}
		return g.Flatten(nil)
	}
	var gs [][]float64
	for b := range batches {
		gs = append(gs, grad(b, false))
	}
	plain := grad(0, true)
	var worst, worstAbs float64
	for i, v := range gs[0] {
		var s, s2 float64
		for _, g := range gs {
			s += g[i]
			s2 += g[i] * g[i]
		}
		mean := s / batches
		sd := math.Sqrt(max(0, s2/batches-mean*mean))
		d := math.Abs(plain[i] - v)
		worstAbs = max(worstAbs, d)
		if d > 0 {
			worst = max(worst, d/sd)
		}
	}
	exact, _, err := e.EvaluateChunked(m, engine.Options{}, batch)
	if err != nil {
		t.Fatal(err)
	}
	check, _, err := e.EvaluateChunked(m, engine.Options{NoCompensation: true}, batch)
	if err != nil {
		t.Fatal(err)
	}
	rel := math.Abs(check.Bound-exact.Bound) / math.Abs(exact.Bound)
	t.Logf("minibatch gradient's rounding ≤ %.2e of the sampling spread; the check's bound off by %.2e of it", worst, rel)
	if worstAbs == 0 || rel == 0 {
		t.Fatal("the float64 and the compensated paths agree exactly: the start no longer needs compensation, and this test measures nothing")
	}
	if !(worst <= 1e-4) {
		t.Errorf("a minibatch gradient's float64 rounding is %.3g of its sampling spread, want ≤ 1e-4", worst)
	}
	if !(rel <= DefaultTol/100) {
		t.Errorf("a check's float64 bound is off by %.3g of it, want ≤ %g (DefaultTol/100)", rel, DefaultTol/100)
	}
}
