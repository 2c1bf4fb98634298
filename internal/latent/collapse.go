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
// deviations (the robot preset's fitted model, TestRealRobotCollapsed: its
// five used dimensions 25 to 346); one the next layer switched off reverts
// to its prior, every mean at one point and every variance the prior's
// (its h1 dimension 3: means spread 3e-13, variance 156, a ratio of
// 3e-14). The threshold sits in the wide gap between the two.
const CollapseRatio = 0.1

// Collapsed reports which dimensions of a hidden layer's message (means
// and variances, N × Q) have collapsed by the rule of CollapseRatio. Its
// cost is one pass over the message: O(N·Q) time, O(Q) memory. Without
// variances (vr nil) nothing is reported collapsed: the rule needs them.
func Collapsed(mean, vr *mat.Dense) []bool {
	_, q := mean.Dims()
	if vr == nil {
		return make([]bool, q)
	}
	var s spreads
	s.add(mean, vr)
	return s.collapsed()
}

// spreads accumulates, row by row (chunk by chunk: Analyze's), each
// dimension's mean of the message means, their sum of squared deviations
// and the sum of the variances. Welford's update keeps the deviations of
// means that agree to 1e-12, where E[x²] − E[x]² would cancel to noise.
type spreads struct {
	n              int
	mu, ss, sumVar []float64
}

func (s *spreads) add(mean, vr *mat.Dense) {
	r, q := mean.Dims()
	if s.mu == nil {
		s.mu, s.ss, s.sumVar = make([]float64, q), make([]float64, q), make([]float64, q)
	}
	for i := range r {
		s.n++
		m, v := mean.RawRowView(i), vr.RawRowView(i)
		for k := range q {
			d := m[k] - s.mu[k]
			s.mu[k] += d / float64(s.n)
			s.ss[k] += d * (m[k] - s.mu[k])
			s.sumVar[k] += v[k]
		}
	}
}

// of returns dimension k's centre (the mean of its means), spread (their
// standard deviation over the rows) and the rows' standard deviation (the
// root mean of its variances): the two last are what the rule compares.
func (s *spreads) of(k int) (centre, spread, sd float64) {
	if s.n == 0 {
		return 0, 0, 0
	}
	return s.mu[k], math.Sqrt(s.ss[k] / float64(s.n)), math.Sqrt(math.Max(0, s.sumVar[k]/float64(s.n)))
}

func (s *spreads) collapsed() []bool {
	out := make([]bool, len(s.mu))
	for k := range out {
		_, spread, sd := s.of(k)
		out[k] = s.n > 0 && spread <= CollapseRatio*sd
	}
	return out
}

// spreadOf is spreads.of for dimension k of one message.
func spreadOf(mean, vr *mat.Dense, k int) (centre, spread, sd float64) {
	var s spreads
	s.add(mean, vr)
	return s.of(k)
}
