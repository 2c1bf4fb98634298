package latent

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// CollapseRatio is the rule for a collapsed hidden dimension: one whose
// message means spread over the rows (their standard deviation) less than
// CollapseRatio times the rows' own uncertainty along it (the root mean of
// the message variances). Rows whose positions differ by a tenth of their
// standard deviation cannot be told apart along the dimension: a picture
// that stretches the means to fill an axis shows round-off as structure.
// A dimension the model uses has means spread over many standard
// deviations (the robot's used dimensions: ratios of 10 to 100); one the
// next layer switched off reverts to its prior, every mean at one point and
// every variance the prior's (the robot's third dimension of h1: means
// within 1e-12 of each other, variance 156, a ratio below 1e-13). The
// threshold sits in the wide gap between the two.
const CollapseRatio = 0.1

// Collapsed reports which dimensions of a hidden layer's message (means
// and variances, N × Q) have collapsed by the rule of CollapseRatio. Its
// cost is one pass over the message: O(N·Q) time, O(Q) memory. Without
// variances (vr nil) nothing is reported collapsed: the rule needs them.
func Collapsed(mean, vr *mat.Dense) []bool {
	n, q := mean.Dims()
	out := make([]bool, q)
	if vr == nil || n == 0 {
		return out
	}
	for k := range q {
		_, spread, sd := spreadOf(mean, vr, k)
		out[k] = spread <= CollapseRatio*sd
	}
	return out
}

// spreadOf returns, for dimension k of a message (means and variances,
// N × Q), the mean of its means, their standard deviation over the rows
// and the root mean of its variances: the two numbers Collapsed compares.
func spreadOf(mean, vr *mat.Dense, k int) (centre, spread, sd float64) {
	n, _ := mean.Dims()
	if n == 0 {
		return 0, 0, 0
	}
	// Two passes: the means of a collapsed dimension agree to 1e-12, where
	// one pass's E[x²] − E[x]² would cancel to noise.
	var mu, v float64
	for i := range n {
		mu += mean.At(i, k)
		v += vr.At(i, k)
	}
	mu /= float64(n)
	var ss float64
	for i := range n {
		d := mean.At(i, k) - mu
		ss += d * d
	}
	return mu, math.Sqrt(ss / float64(n)), math.Sqrt(math.Max(0, v/float64(n)))
}
