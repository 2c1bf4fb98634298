package train

import "math"

// Forecast predicts how many more iterations a fit makes before its
// stopping rule fires, from the rule's measure after each step
// (StepInfo.Expected and Limit): the expected rise decays, and the fit
// stops where it meets the limit. The decay is fitted as an exponential
// to the expected rises of the last forecastSpans rise spans (a line
// through their logarithms, by least squares); a rise that does not decay
// there is taken to fall as 1/iterations, as a bound that rises as the
// logarithm of the iterations does. Measured on the step and robot fits
// (TestForecast, docs/fitting.md), the forecast of the whole fit's length
// is within a factor of 2 from half-way on.
type Forecast struct {
	span     int // iterations whose expected rises are fitted
	pts      []forecastPoint
	last     StepInfo // the last step
	measured StepInfo // the last step with a measure (SVI: its last check)
	have     bool
}

type forecastPoint struct{ iter, logExpected float64 }

// forecastSpans is how many of the rule's rise spans the decay is fitted
// over: long enough to average L-BFGS's uneven progress, short enough to
// follow a change of pace.
const forecastSpans = 8

// NewForecast returns a forecast for a fit whose rule measures its rise
// over riseSpan iterations (TrainerConfig.RiseSpan).
func NewForecast(riseSpan int) *Forecast {
	return &Forecast{span: forecastSpans * max(riseSpan, 1)}
}

// Add records a step. A new fit, or a step whose rule has no measure
// (a divergence event emptied its window), empties the record; an SVI
// fit's steps between its checks (estimates) keep the last check's.
func (f *Forecast) Add(s StepInfo) {
	if f.have && s.Iter <= f.last.Iter || math.IsNaN(s.Expected) && !s.Estimate {
		f.pts = f.pts[:0]
		f.measured = StepInfo{Expected: math.NaN()}
	}
	f.last, f.have = s, true
	if math.IsNaN(s.Expected) {
		return
	}
	f.measured = s
	if !(s.Expected > 0) || math.IsInf(s.Expected, 0) {
		return
	}
	it := float64(s.Iter)
	// Thinned to at most 32 points over the span.
	if n := len(f.pts); n > 0 && it-f.pts[n-1].iter < float64(f.span)/32 {
		return
	}
	f.pts = append(f.pts, forecastPoint{it, math.Log(s.Expected)})
	k := 0
	for k < len(f.pts) && f.pts[k].iter < it-float64(f.span) {
		k++
	}
	f.pts = append(f.pts[:0], f.pts[k:]...)
}

// ItersLeft returns the iterations expected before the rule fires, or
// false before the rule has a measure (its window has not filled).
func (f *Forecast) ItersLeft() (int, bool) {
	s := f.measured
	if !f.have || math.IsNaN(s.Expected) || !(s.Limit > 0) {
		return 0, false
	}
	if f.last.Status.Terminated() || s.Expected <= s.Limit {
		return 0, true
	}
	ratio := s.Expected / s.Limit
	left := float64(max(s.Iter, 1)) * (ratio - 1)
	if k := f.decay(); k > 0 {
		left = math.Log(ratio) / k
	}
	since := f.last.Iter - s.Iter // steps since the measure
	return max(0, int(math.Ceil(left))-since), true
}

// decay is the rate k of the exponential exp(−k·iterations) fitted to the
// expected rises (0 with fewer than 3 points).
func (f *Forecast) decay() float64 {
	n := float64(len(f.pts))
	if n < 3 {
		return 0
	}
	var mx, my float64
	for _, p := range f.pts {
		mx += p.iter
		my += p.logExpected
	}
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for _, p := range f.pts {
		sxx += (p.iter - mx) * (p.iter - mx)
		sxy += (p.iter - mx) * (p.logExpected - my)
	}
	if sxx == 0 {
		return 0
	}
	return -sxy / sxx
}
