package train

import (
	"math"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// riseOvershoot predicts with m on a grid of 1001 points in [0, 1]
// (original units) and returns the 10 %–90 % rise width of the predictive
// mean (the x distance between its first crossings of 0.1 and 0.9) and its
// overshoot, max(mean) − 1 (the step's top level).
func riseOvershoot(t testing.TB, m *engine.Model, nx, ny dataset.Normalizer) (width, overshoot float64) {
	t.Helper()
	const n = 1001
	xs := mat.NewDense(n, 1, nil)
	for i := range n {
		xs.Set(i, 0, float64(i)/(n-1))
	}
	var ev engine.Evaluator
	msgs, err := ev.Predict(m, nx.Apply(xs))
	if err != nil {
		t.Fatalf("Predict: %v", err)
	}
	mean := ny.UndoMean(msgs[len(msgs)-1].Mean)
	cross := func(level float64) float64 {
		for i := 1; i < n; i++ {
			a, b := mean.At(i-1, 0), mean.At(i, 0)
			if a < level && b >= level {
				return (float64(i-1) + (level-a)/(b-a)) / (n - 1)
			}
		}
		return math.NaN()
	}
	top := math.Inf(-1)
	for i := range n {
		top = math.Max(top, mean.At(i, 0))
	}
	return cross(0.9) - cross(0.1), top - 1
}

// secondPart is why a test that fits to convergence skips under the race
// detector: README's test command runs it again without it.
const secondPart = "fits to convergence, many times slower under the race detector: the second part of README's test command runs it (go test -count=1 -run 'TestRobotAcceptance$|TestStepAcceptance$|TestForecast|TestMinibatchRounding$' ./internal/train)"
