package montecarlo

import (
	"math"
	"math/rand/v2"
	"testing"

	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// randomModel builds a model with widths[0] = Q(0), widths[L] = D(L), the
// given kernels per layer ("rbf" or "linear") and m inducing points per
// layer (at most Q for a linear layer, whose Kuu has rank Q), with random
// but well-conditioned parameters. It mirrors the engine's unexported
// test helper.
func randomModel(rng *rand.Rand, n int, widths []int, kernels []string, m int) *engine.Model {
	x := mat.NewDense(n, widths[0], nil)
	for i := 0; i < n; i++ {
		for j := 0; j < widths[0]; j++ {
			x.Set(i, j, rng.Float64()*2-1)
		}
	}
	dy := widths[len(widths)-1]
	y := mat.NewDense(n, dy, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < dy; j++ {
			y.Set(i, j, math.Sin(3*x.At(i, 0))+0.1*rng.NormFloat64())
		}
	}
	model := &engine.Model{Jitter: 1e-4, X: x, Y: y}
	for i := 0; i+1 < len(widths); i++ {
		q, d := widths[i], widths[i+1]
		var k engine.Kernel
		mi := m
		switch kernels[i] {
		case "rbf":
			ls := make([]float64, q)
			for j := range ls {
				ls[j] = 0.5 + 0.5*rng.Float64()
			}
			k = engine.NewRBF(0.5+rng.Float64(), ls)
		case "linear":
			vs := make([]float64, q)
			for j := range vs {
				vs[j] = 0.5 + rng.Float64()
			}
			k = engine.NewLinear(vs)
			mi = min(m, q)
		}
		z := mat.NewDense(mi, q, nil)
		for r := 0; r < mi; r++ {
			for c := 0; c < q; c++ {
				z.Set(r, c, rng.Float64()*3-1.5)
				if kernels[i] == "linear" {
					// Near-orthogonal rows keep the rank-Q Kuu well conditioned.
					z.Set(r, c, 0.3*z.At(r, c))
					if r == c {
						z.Set(r, c, z.At(r, c)+1)
					}
				}
			}
		}
		qmu := mat.NewDense(mi, d, nil)
		for r := 0; r < mi; r++ {
			for c := 0; c < d; c++ {
				qmu.Set(r, c, rng.NormFloat64())
			}
		}
		var qs []*mat.Dense
		for range d {
			s := mat.NewDense(mi, mi, nil)
			for r := 0; r < mi; r++ {
				for c := 0; c < r; c++ {
					s.Set(r, c, 0.1*rng.NormFloat64())
				}
				s.Set(r, r, 0.2+0.3*rng.Float64())
			}
			qs = append(qs, s)
		}
		model.Layers = append(model.Layers, &engine.Layer{Kernel: k, NoiseVariance: 0.05 + 0.1*rng.Float64(), InducingInputs: z, QMu: qmu, QSqrt: qs})
	}
	return model
}

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
