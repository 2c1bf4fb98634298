package montecarlo

import (
	"math"
	"testing"

	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// stepModel returns a 1-D, one-layer RBF model with inducing inputs
// evenly spread over [-1, 1] and a q(u) mean following a step, so that
// the function bends near 0 and is unsupported beyond ±1.
func stepModel(m int) *engine.Model {
	x := mat.NewDense(40, 1, nil)
	y := mat.NewDense(40, 1, nil)
	for i := 0; i < 40; i++ {
		v := -1 + 2*float64(i)/39
		x.Set(i, 0, v)
		if v > 0 {
			y.Set(i, 0, 1)
		}
	}
	z := mat.NewDense(m, 1, nil)
	qmu := mat.NewDense(m, 1, nil)
	qs := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		v := -1 + 2*float64(i)/float64(m-1)
		z.Set(i, 0, v)
		qmu.Set(i, 0, math.Tanh(6*v))
		qs.Set(i, i, 0.05)
	}
	return &engine.Model{Jitter: 1e-6, X: x, Y: y, Layers: []*engine.Layer{{
		Kernel: engine.NewRBF(1, []float64{0.3}), NoiseVariance: 0.01,
		InducingInputs: z, QMu: qmu, QSqrt: []*mat.Dense{qs},
	}}}
}

func mustLayer(t testing.TB, l *engine.Layer, jitter float64) *Layer {
	t.Helper()
	ly, err := NewLayer(l, jitter)
	if err != nil {
		t.Fatalf("NewLayer: %v", err)
	}
	return ly
}
