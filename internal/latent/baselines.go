package latent

import (
	"math"

	"dgpviz/internal/linalg"

	"gonum.org/v1/gonum/mat"
)

// The geometry score of a learned latent space means little alone: the
// start a deep GP is given may already close the loop. Two baselines use
// no model at all, and a learned latent should be read beside them.

// InputBaseline is the latent that encodes the input only: for a 1-D input
// (time) its standardised powers t, t², t³ — a curve that keeps far-apart
// times apart, as a latent that learned nothing beyond time does — and for
// wider inputs the standardised inputs themselves.
func InputBaseline(x *mat.Dense) *mat.Dense {
	n, q := x.Dims()
	if q > 1 {
		return standardized(mat.DenseCopyOf(x))
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range n {
		lo, hi = math.Min(lo, x.At(i, 0)), math.Max(hi, x.At(i, 0))
	}
	out := mat.NewDense(n, 3, nil)
	for i := range n {
		t := 0.0
		if hi > lo {
			t = (x.At(i, 0) - lo) / (hi - lo)
		}
		for k := range 3 {
			out.Set(i, k, math.Pow(t, float64(k+1)))
		}
	}
	return standardized(out)
}

// OutputBaseline is the latent of the outputs' k leading principal
// components (fewer when the outputs have fewer): what a linear map of the
// data alone gives, and where the explorer's preset starts its first
// hidden layer.
func OutputBaseline(y *mat.Dense, k int) *mat.Dense {
	n, d := y.Dims()
	k = min(k, d, n)
	raw := y.RawMatrix()
	if raw.Stride != d { // a view: its rows packed
		raw = mat.DenseCopyOf(y).RawMatrix()
	}
	scores, real := linalg.PrincipalScores(raw.Data[:n*d], n, d, k)
	out := mat.NewDense(n, k, scores)
	if real < k {
		return mat.DenseCopyOf(out.Slice(0, n, 0, max(real, 1)))
	}
	return out
}

// TimeFeatures returns the baseline latent that encodes time only: the
// standardised polynomial features t, t², …, t^degree of t = 0…n−1.
func TimeFeatures(n, degree int) *mat.Dense {
	out := mat.NewDense(n, degree, nil)
	for k := 0; k < degree; k++ {
		for i := 0; i < n; i++ {
			out.Set(i, k, math.Pow(float64(i)/float64(max(n-1, 1)), float64(k+1)))
		}
	}
	return standardized(out)
}

// standardized scales every column of a to mean 0 and standard deviation
// 1 (a constant column to 0) in place and returns it.
func standardized(a *mat.Dense) *mat.Dense {
	n, c := a.Dims()
	for k := range c {
		var mean, sq float64
		for i := range n {
			mean += a.At(i, k)
		}
		mean /= float64(n)
		for i := range n {
			d := a.At(i, k) - mean
			sq += d * d
		}
		sd := math.Sqrt(sq / float64(n))
		if sd == 0 {
			sd = 1
		}
		for i := range n {
			a.Set(i, k, (a.At(i, k)-mean)/sd)
		}
	}
	return a
}
