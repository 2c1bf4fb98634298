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
//
// Where a fit will stop is not known so closely: near its end the expected
// rise hovers about the limit, and the fit stops where it first dips below
// (the robot's seed 3 stayed within 1.1–1.9 times the limit for 600
// iterations). Bounds therefore says what can be promised: the iterations
// left at least and at most; Point, a forecast between them.
type Forecast struct {
	span     int // iterations whose expected rises are fitted
	riseSpan int // iterations the rule measures its rise over
	steps    int // steps since the record was last emptied
	pts      []forecastPoint
	last     StepInfo // the last step
	measured StepInfo // the last step with a measure (SVI: its last check)
	have     bool
	// The best bound at each full-data step (SVI: check) since the rule's
	// record last started afresh, over the last two rise spans: what the
	// rule will compare the coming bounds with.
	bests      []iterBest
	stochastic bool // steps between checks seen: the rule runs at checks only
}

type forecastPoint struct{ iter, logExpected float64 }

type iterBest struct {
	iter int
	best float64
}

// forecastSpans is how many of the rule's rise spans the decay is fitted
// over: long enough to average L-BFGS's uneven progress, short enough to
// follow a change of pace.
const forecastSpans = 8

// NewForecast returns a forecast for a fit whose rule measures its rise
// over riseSpan iterations (TrainerConfig.RiseSpan).
func NewForecast(riseSpan int) *Forecast {
	riseSpan = max(riseSpan, 1)
	return &Forecast{span: forecastSpans * riseSpan, riseSpan: riseSpan}
}

// Add records a step. A new fit, or a step whose rule has no measure
// (a divergence event emptied its window), empties the record; an SVI
// fit's steps between its checks (estimates) keep the last check's.
func (f *Forecast) Add(s StepInfo) {
	newFit := f.have && s.Iter <= f.last.Iter
	if newFit || math.IsNaN(s.Expected) && !s.Estimate {
		if newFit || f.have && !math.IsNaN(f.measured.Expected) {
			f.steps = 0 // the window fills afresh
		}
		f.pts = f.pts[:0]
		f.measured = StepInfo{Expected: math.NaN()}
	}
	if newFit || s.Event != "" {
		f.bests = f.bests[:0] // the rule's record starts afresh
	}
	f.last, f.have = s, true
	f.steps++
	f.stochastic = f.stochastic && !newFit || s.Estimate
	// A full-batch fit's rule records no bound at a divergence event, an
	// SVI fit's its best check's.
	if !s.Estimate && !math.IsNaN(s.Bound) && (s.Event == "" || f.stochastic) {
		b := s.Bound
		if n := len(f.bests); n > 0 {
			b = max(b, f.bests[n-1].best)
		}
		f.bests = append(f.bests, iterBest{s.Iter, b})
		k := 0
		for k < len(f.bests)-1 && f.bests[k+1].iter <= s.Iter-2*f.riseSpan {
			k++
		}
		f.bests = append(f.bests[:0], f.bests[k:]...)
	}
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

// boundsSlack is how many times the iterations of a rise falling as
// 1/iterations Bounds allows at most: on the step, robot, Frey and
// 20,000-row walk fits (docs/measurements.md) the iterations left never
// exceeded 1.26 times those.
const boundsSlack = 2

// Bounds returns the iterations left before the rule fires, at least (lo)
// and at most (hi; hiKnown false when nothing bounds them yet but the
// fit's cap). Before the rule has a measure its window must fill first:
// lo is the steps until it does, hi unknown. With a measure the rule may
// fire at the next step (lo 0), and hi is the larger of the forecast
// (ItersLeft) and boundsSlack times the iterations a rise falling as
// 1/iterations takes to meet the limit (the bound rising as the
// logarithm of the iterations, the slowest a fit that converges was seen
// to go). An optimizer's own tests (gradient threshold) can stop a fit
// before lo.
func (f *Forecast) Bounds() (lo, hi int, hiKnown bool) {
	s := f.measured
	if f.have && f.last.Status.Terminated() {
		return 0, 0, true
	}
	if !f.have || math.IsNaN(s.Expected) || !(s.Limit > 0) {
		// The rule's first measure comes with the step after its
		// window has filled (a fit not begun has all of it to fill).
		return max(0, f.riseSpan+1-f.steps), 0, false
	}
	left, _ := f.ItersLeft()
	if s.Expected <= s.Limit {
		return 0, left, true
	}
	slow := boundsSlack * float64(max(s.Iter, 1)) * (s.Expected/s.Limit - 1)
	since := f.last.Iter - s.Iter
	lo = f.notBefore()
	return lo, max(lo, left, int(math.Ceil(min(slow, math.MaxInt32)))-since), true
}

// Point returns a point forecast of the iterations left: the geometric
// mean of Bounds' lo (at least 1) and hi, so within a factor of
// sqrt(hi/lo) of every count between them; false before the rule has a
// measure (hi unknown). It is no bound: where the fit stops within them
// is the first dip of a noisy measure below its limit, and of the
// forecasts tried on the step, robot, Frey and 20,000-row walk fits (the
// fitted decay, the 1/iterations rise, their geometric mean, fractions
// of hi) it came within 2× most often (docs/measurements.md, "A point
// ETA").
func (f *Forecast) Point() (int, bool) {
	lo, hi, known := f.Bounds()
	if !known {
		return 0, false
	}
	if hi == 0 {
		return 0, true
	}
	return int(math.Round(math.Sqrt(float64(max(lo, 1)) * float64(hi)))), true
}

// notBefore is the steps from the last one before the rule can fire, from
// the bounds it will compare the coming ones with. The rule fires at a
// full-data step t (SVI: a check) when the best bound rose by at most
// Limit·Rise/Expected over the rise span before it. The best bound never
// falls, so until the span reaches back past the last step that rise is
// at least the best now less the best at t − span, which is known. A
// fit's window that ends in a slow stretch leaves the rule little to wait
// for; one that ends in a fast one, the span's length.
func (f *Forecast) notBefore() int {
	s := f.measured
	if !(s.Expected > s.Limit) || !(s.Rise > 0) || len(f.bests) == 0 {
		return 0
	}
	limit := s.Limit * s.Rise / s.Expected // the rise the rule accepts
	now := f.bests[len(f.bests)-1]
	// The earliest best within limit of the best now: the first step whose
	// span may start there fires at the earliest.
	j := 0
	for j < len(f.bests) && now.best-f.bests[j].best > limit {
		j++
	}
	if j == 0 {
		return 0 // the record does not reach back far enough to tell
	}
	// The first step whose span starts there; for SVI a check, as the
	// bests are.
	return max(0, f.bests[j].iter+f.riseSpan-f.last.Iter)
}
