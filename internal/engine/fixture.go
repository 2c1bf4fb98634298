package engine

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// RandomModel builds a model with widths[0] = Q(0), widths[L] = D(L), the
// given kernels per layer ("rbf" or "linear") and m inducing points per
// layer, with random but well-conditioned parameters: inducing inputs at least
// 0.5 apart, jitter 1e-4, q(u) covariances well away from singular. It is a
// fixture for tests and benchmarks here and in the packages built on the
// engine, where finite differences must be accurate.
func RandomModel(rng *rand.Rand, n int, widths []int, kernels []string, m int) *Model {
	x := mat.NewDense(n, widths[0], nil)
	for i := 0; i < n; i++ {
		for j := 0; j < widths[0]; j++ {
			x.Set(i, j, rng.Float64()*2-1)
		}
	}
	y := mat.NewDense(n, widths[len(widths)-1], nil)
	for i := 0; i < n; i++ {
		for j := 0; j < widths[len(widths)-1]; j++ {
			y.Set(i, j, math.Sin(3*x.At(i, 0))+0.1*rng.NormFloat64())
		}
	}
	model := &Model{Jitter: 1e-4, X: x, Y: y}
	for i := 0; i+1 < len(widths); i++ {
		q, d := widths[i], widths[i+1]
		var k Kernel
		switch kernels[i] {
		case "rbf":
			ls := make([]float64, q)
			for j := range ls {
				ls[j] = 0.5 + 0.5*rng.Float64()
			}
			k = NewRBF(0.5+rng.Float64(), ls)
		case "rbfiso":
			k = NewRBFIso(0.5+rng.Float64(), 0.5+0.5*rng.Float64(), q)
		case "linear":
			vs := make([]float64, q)
			for j := range vs {
				vs[j] = 0.5 + rng.Float64()
			}
			k = NewLinear(vs)
		}
		mi := m
		if kernels[i] == "linear" {
			// A linear Kuu has rank Q: more inducing points than that would
			// leave it singular but for the jitter.
			mi = min(m, q)
		}
		m := mi
		z := mat.NewDense(m, q, nil)
		for r := 0; r < m; r++ {
			// Inducing inputs at least 0.5 apart keep Kuu well conditioned,
			// so that finite differences are accurate. Where earlier points
			// leave no such room (six in 1-D, say), keep the candidate
			// farthest from the others: a last random try could land 0.08
			// from a neighbour and leave cond(Kuu) at 4e4.
			best, bestD := make([]float64, q), -1.0
			for try := 0; try < 1000; try++ {
				for c := 0; c < q; c++ {
					z.Set(r, c, rng.Float64()*3-1.5)
				}
				d := minDistance(z, r)
				if d > bestD {
					bestD = d
					mat.Row(best, r, z)
				}
				if d >= 0.5 {
					break
				}
			}
			z.SetRow(r, best)
			for c := 0; c < q; c++ {
				if kernels[i] == "linear" {
					// Near-orthogonal rows keep the rank-Q Kuu well conditioned.
					z.Set(r, c, 0.3*z.At(r, c))
					if r == c {
						z.Set(r, c, z.At(r, c)+1)
					}
				}
			}
		}
		qmu := mat.NewDense(m, d, nil)
		for r := 0; r < m; r++ {
			for c := 0; c < d; c++ {
				qmu.Set(r, c, 0.5*rng.NormFloat64())
			}
		}
		var qs []*mat.Dense
		for range d {
			s := mat.NewDense(m, m, nil)
			for r := 0; r < m; r++ {
				for c := 0; c < r; c++ {
					s.Set(r, c, 0.1*rng.NormFloat64())
				}
				s.Set(r, r, 0.2+0.3*rng.Float64())
			}
			qs = append(qs, s)
		}
		model.Layers = append(model.Layers, &Layer{Kernel: k, NoiseVariance: 0.05 + 0.1*rng.Float64(), InducingInputs: z, QMu: qmu, QSqrt: qs})
	}
	return model
}

// minDistance returns the smallest distance from row r of z to rows 0…r−1.
func minDistance(z *mat.Dense, r int) float64 {
	best := math.Inf(1)
	_, q := z.Dims()
	for i := 0; i < r; i++ {
		var d2 float64
		for c := 0; c < q; c++ {
			d := z.At(i, c) - z.At(r, c)
			d2 += d * d
		}
		best = math.Min(best, math.Sqrt(d2))
	}
	return best
}

// StepModel returns a 1-D, one-layer RBF model with inducing inputs
// evenly spread over [-1, 1] and a q(u) mean following a step, so that
// the function bends near 0 and is unsupported beyond ±1: a fixture for
// the figures' tests.
func StepModel(m int) *Model {
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
	return &Model{Jitter: 1e-6, X: x, Y: y, Layers: []*Layer{{
		Kernel: NewRBF(1, []float64{0.3}), NoiseVariance: 0.01,
		InducingInputs: z, QMu: qmu, QSqrt: []*mat.Dense{qs},
	}}}
}
