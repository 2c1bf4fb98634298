package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestMessageIdentityMonteCarlo checks, by sampling, the identity that the
// whole visualiser teaches: under x ~ the input message, u ~ q(u), f | u
// from the GP conditional and h = f(x) + noise, the true response of output
// d has mean exactly mean_nd and variance exactly
// var_nd + 2 s2 (compression_n/D + propagation_nd), so that summed over d
// the extra variance is 2 s2 (compression_n + propagation_n).
func TestMessageIdentityMonteCarlo(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (fits or Monte Carlo to convergence): not in the short tier")
	}
	for ci, widths := range [][]int{{1, 1, 1}, {1, 2, 2}, {1, 1, 1, 1}, {1, 2, 3, 1}} {
		kernels := make([]string, len(widths)-1)
		for i := range kernels {
			kernels[i] = "rbf"
		}
		t.Run(fmt.Sprint(widths), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 3))
			m := RandomModel(rng, 3, widths, kernels, 5)
			res, _ := mustEval(t, m, Options{OutputVariance: true})
			for li := 1; li < len(m.Layers); li++ {
				l := m.Layers[li]
				post, err := NewLayerPosterior(l, m.Jitter)
				if err != nil {
					t.Fatal(err)
				}
				in := res.Messages[li-1]
				out := res.Messages[li]
				_, _, d := l.Dims()
				for n := 0; n < 3; n++ {
					mean, vr, se, seVar := sampleResponse(rng, post, in.Mean.RawRowView(n), in.Var.RawRowView(n), 50000)
					extra := 0.0
					for k := 0; k < d; k++ {
						if e := math.Abs(mean[k] - out.Mean.At(n, k)); e > 4*se[k] {
							t.Errorf("layer %d datum %d output %d: MC mean %.5g, message mean %.5g (se %.2g)", li, n, k, mean[k], out.Mean.At(n, k), se[k])
						}
						extra += vr[k] - out.Var.At(n, k)
					}
					want := 2 * l.NoiseVariance * (res.Layers[li].CompressionPerDatum[n] + res.Layers[li].PropagationPerDatum[n])
					// Outputs share x, so their errors correlate; bound the
					// standard error of the sum by the sum of the errors.
					seBound := 0.0
					for k := 0; k < d; k++ {
						seBound += seVar[k]
					}
					if math.Abs(extra-want) > 4*seBound {
						t.Errorf("layer %d datum %d: MC variance − message variance = %.5g, 2 s2 (compression + propagation) = %.5g (se ≤ %.2g)", li, n, extra, want, seBound)
					}
				}
			}
		})
	}
}

// sampleResponse draws h = f(x) + ε with x ~ N(mu, diag s), u_d ~ q(u_d) and
// f_d | u_d from the GP conditional, and returns the sample mean and variance
// of each output with their standard errors.
func sampleResponse(rng *rand.Rand, p *LayerPosterior, mu, s []float64, n int) (mean, vr, seMean, seVar []float64) {
	l := p.Layer
	mz, q, d := l.Dims()
	x := make([]float64, q)
	kx := mat.NewVecDense(mz, nil)
	alpha := mat.NewVecDense(mz, nil)
	eps := mat.NewVecDense(mz, nil)
	u := mat.NewVecDense(mz, nil)
	sum := make([]float64, d)
	sum2 := make([]float64, d)
	sum4 := make([]float64, d)
	samples := make([][]float64, d)
	for k := range samples {
		samples[k] = make([]float64, n)
	}
	for it := 0; it < n; it++ {
		for j := range x {
			x[j] = mu[j] + math.Sqrt(s[j])*rng.NormFloat64()
		}
		p.CrossCov(kx.RawVector().Data, x)
		alpha.SolveVec(p.Kuu, kx)
		condVar := l.Kernel.Eval(x, x) - mat.Dot(kx, alpha)
		for k := 0; k < d; k++ {
			for j := 0; j < mz; j++ {
				eps.SetVec(j, rng.NormFloat64())
			}
			// u = m_d + L_d ε using the lower triangle only.
			for r := 0; r < mz; r++ {
				v := l.QMu.At(r, k)
				for c := 0; c <= r; c++ {
					v += l.QSqrt[k].At(r, c) * eps.AtVec(c)
				}
				u.SetVec(r, v)
			}
			f := mat.Dot(alpha, u) + math.Sqrt(math.Max(condVar, 0))*rng.NormFloat64()
			h := f + math.Sqrt(l.NoiseVariance)*rng.NormFloat64()
			samples[k][it] = h
			sum[k] += h
		}
	}
	mean, vr, seMean, seVar = make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	for k := 0; k < d; k++ {
		mean[k] = sum[k] / float64(n)
		for _, h := range samples[k] {
			c := h - mean[k]
			sum2[k] += c * c
			sum4[k] += c * c * c * c
		}
		vr[k] = sum2[k] / float64(n-1)
		m4 := sum4[k] / float64(n)
		seMean[k] = math.Sqrt(vr[k] / float64(n))
		seVar[k] = math.Sqrt(math.Max(m4-vr[k]*vr[k], 0) / float64(n))
	}
	return mean, vr, seMean, seVar
}
