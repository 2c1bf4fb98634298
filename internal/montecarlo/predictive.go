package montecarlo

import (
	"fmt"
	"math"
	"slices"

	"dgpviz/internal/engine"
)

// Limits of Predictive.
const (
	MaxPredictiveInputs  = 400
	MaxPredictiveBins    = 200
	MaxPredictiveSamples = 20000
)

// PredictiveDensity is the whole deep GP's predictive distribution of one
// output on a grid of inputs, by Monte Carlo: at each input, samples drawn
// ancestrally through every layer (u ~ q(u), f | u, and each layer's
// noise), histogrammed on common bins. Unlike the Gaussian final message it
// shows where the deep GP is skewed or bimodal (near the step, say).
type PredictiveDensity struct {
	X       []float64 // the G inputs (model units, 1-D)
	Edges   []float64 // the B+1 bin edges of the output (model units)
	Density []float64 // G×B, row-major: the density of each bin at each input (integrates to 1 per input, up to samples outside the edges)
	Samples int       // per input
	// Modes counts, per input, the separate peaks of the density that
	// hold at least 10 % of the samples each: 2 or more is bimodal.
	Modes []int
}

// Predictive samples m's output dim at each of xs (model units; m must
// have a 1-D input) with samples chains, and histograms them on bins
// common bins spanning the samples' 0.5–99.5 % range. The seed fixes the
// random streams: equal arguments give equal densities.
func Predictive(m *engine.Model, xs []float64, dim, samples, bins int, seed uint64) (*PredictiveDensity, error) {
	if err := checkCurveInputs(m, xs, dim, MaxPredictiveInputs, "the predictive density needs"); err != nil {
		return nil, err
	}
	switch {
	case samples < 10 || samples > MaxPredictiveSamples:
		return nil, fmt.Errorf("%d samples per input, want 10…%d", samples, MaxPredictiveSamples)
	case bins < 2 || bins > MaxPredictiveBins:
		return nil, fmt.Errorf("%d bins, want 2…%d", bins, MaxPredictiveBins)
	}
	all := make([][]float64, len(xs))
	var pool []float64
	for i, x := range xs {
		chain, err := SampleChain(m, []float64{x}, Options{Samples: samples, Seed: seed + uint64(i), Workers: 1})
		if err != nil {
			return nil, err
		}
		last := chain[len(chain)-1]
		v := make([]float64, samples)
		for s := range v {
			v[s] = last.At(s, dim)
		}
		all[i] = v
		pool = append(pool, v...)
	}
	slices.Sort(pool)
	lo, hi := quantile(pool, 0.005), quantile(pool, 0.995)
	if !(hi > lo) {
		lo, hi = lo-0.5, hi+0.5
	}
	pad := 0.05 * (hi - lo)
	lo, hi = lo-pad, hi+pad
	w := (hi - lo) / float64(bins)
	p := &PredictiveDensity{X: slices.Clone(xs), Edges: make([]float64, bins+1), Density: make([]float64, len(xs)*bins), Samples: samples, Modes: make([]int, len(xs))}
	for b := range p.Edges {
		p.Edges[b] = lo + float64(b)*w
	}
	counts := make([]float64, bins)
	for i, v := range all {
		clear(counts)
		for _, y := range v {
			if b := int((y - lo) / w); b >= 0 && b < bins {
				counts[b]++
			}
		}
		for b, c := range counts {
			p.Density[i*bins+b] = c / (float64(samples) * w)
		}
		p.Modes[i] = modes(counts)
	}
	return p, nil
}

// modes counts the peaks of a histogram (smoothed over 3 bins) that reach
// 10 % of its highest and are separated from their neighbours by a dip
// below half the lower of the two.
func modes(counts []float64) int {
	k := len(counts)
	s := make([]float64, k)
	top := 0.0
	for b := range s {
		for j := max(0, b-1); j <= min(k-1, b+1); j++ {
			s[b] += counts[j] / 3
		}
		top = math.Max(top, s[b])
	}
	var peaks []int
	for b := 0; b < k; b++ {
		rising := b == 0 || s[b] > s[b-1]
		falling := b == k-1 || s[b] >= s[b+1]
		if !rising || !falling || s[b] < 0.1*top || top == 0 {
			continue
		}
		if n := len(peaks); n > 0 {
			p := peaks[n-1]
			dip := slices.Min(s[p : b+1])
			if dip >= 0.5*math.Min(s[p], s[b]) { // one mode: keep the higher peak
				if s[b] > s[p] {
					peaks[n-1] = b
				}
				continue
			}
		}
		peaks = append(peaks, b)
	}
	return len(peaks)
}

// checkCurveInputs checks what a curve over a 1-D model's inputs needs (the
// predictive density's, the sample paths'): a model with one input, an
// output dim of it, and 2…maxInputs finite inputs xs. what names the curve
// and its verb in the message ("sample paths need").
func checkCurveInputs(m *engine.Model, xs []float64, dim, maxInputs int, what string) error {
	if m == nil {
		return fmt.Errorf("nil model")
	}
	_, q := m.X.Dims()
	_, d := m.Y.Dims()
	switch {
	case q != 1:
		return fmt.Errorf("%s a 1-D input, the model has %d", what, q)
	case dim < 0 || dim >= d:
		return fmt.Errorf("output %d out of range 1…%d", dim+1, d)
	case len(xs) < 2 || len(xs) > maxInputs:
		return fmt.Errorf("%d inputs, want 2…%d", len(xs), maxInputs)
	}
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("input %v is not finite", x)
		}
	}
	return nil
}
