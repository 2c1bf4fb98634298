package view

import (
	"math"
	"slices"

	"dgpviz/internal/engine"
	"dgpviz/internal/train"
	"dgpviz/internal/wire"
)

// Collapse says that a model has collapsed: one of its layers passes
// nothing on. Its function is flat — its q(u) is the prior (KL ≈ 0), or its
// inducing outputs vary by a vanishing fraction of its noise — or the
// messages out of it are the same for every datum, so every layer after it
// sees one input for all the data and the model predicts the same for
// every input. The optimizer can sit at such a state and call it
// stationary: a naïve edit (moving an inducing input with q(u) kept) that
// costs thousands of nats often ends there, at the bound of a constant
// prediction. The page says so and offers undo; it is never "converged".
type Collapse struct {
	Layer int `json:"layer"` // the first collapsed layer, from 0
	// KL is the layer's KL term (nats); Prior says it is ≈ 0, q(u) the prior.
	KL    wire.Num `json:"kl"`
	Prior bool     `json:"prior"`
	// FunctionSpread is the range of the layer's inducing output means,
	// NoiseSD its noise's standard deviation.
	FunctionSpread wire.Num `json:"function_spread"`
	NoiseSD        wire.Num `json:"noise_sd"`
	// OutputSpread is the range of the means of the messages out of the
	// layer across the data and OutputSD their typical standard deviation
	// (absent for the last layer, whose messages the evaluation does not
	// keep); InputLo and InputHi span those messages' means ± 2 sd: the
	// next layer's inputs, as its panel's axis shows them.
	OutputSpread *wire.Num `json:"output_spread,omitempty"`
	OutputSD     *wire.Num `json:"output_sd,omitempty"`
	InputLo      *wire.Num `json:"input_lo,omitempty"`
	InputHi      *wire.Num `json:"input_hi,omitempty"`
}

// Thresholds of Diagnose. A healthy layer of the step demo has KL 12–16
// nats, inducing outputs that span 100–1000 noise standard deviations and
// messages whose means span 30 of their standard deviations; collapsed
// ones (TestDiagnoseCollapse) have KL below 1e-8, or spans below 1e-20 of
// the noise.
const (
	priorKL   = 1e-3 // nats: q(u) is the prior
	flatRatio = 1e-3 // a span below this fraction of the noise sd is flat
)

// Diagnose returns the first collapsed layer of m, whose evaluation ev
// is, or nil when no layer has collapsed (or m was not evaluated).
func Diagnose(m *engine.Model, ev *train.Evaluation) *Collapse {
	if m == nil || ev == nil || len(ev.Layers) != len(m.Layers) {
		return nil
	}
	for i, l := range m.Layers {
		kl := ev.Layers[i].KL
		noiseSD := math.Sqrt(math.Max(l.NoiseVariance, 0))
		fSpread := columnSpread(l.QMu.RawMatrix().Data, l.QMu.RawMatrix().Stride, l.QMu.RawMatrix().Cols, l.QMu.RawMatrix().Rows)
		c := &Collapse{Layer: i, KL: wire.Num(kl), Prior: math.Abs(kl) < priorKL, FunctionSpread: wire.Num(fSpread), NoiseSD: wire.Num(noiseSD)}
		collapsed := c.Prior || fSpread < flatRatio*noiseSD
		if i < len(ev.Hidden) && ev.Hidden[i].Var != nil {
			msg := ev.Hidden[i]
			mean, vr := msg.Mean.RawMatrix(), msg.Var.RawMatrix()
			spread := columnSpread(mean.Data, mean.Stride, mean.Cols, mean.Rows)
			sd := math.Sqrt(medianOf(vr.Data, vr.Stride, vr.Cols, vr.Rows))
			lo, hi := math.Inf(1), math.Inf(-1)
			for r := 0; r < mean.Rows; r++ {
				for k := 0; k < mean.Cols; k++ {
					mu, s := mean.Data[r*mean.Stride+k], 2*math.Sqrt(math.Max(vr.Data[r*vr.Stride+k], 0))
					lo, hi = math.Min(lo, mu-s), math.Max(hi, mu+s)
				}
			}
			c.OutputSpread, c.OutputSD, c.InputLo, c.InputHi = wire.NumPtr(spread), wire.NumPtr(sd), wire.NumPtr(lo), wire.NumPtr(hi)
			collapsed = collapsed || spread < flatRatio*sd
		}
		if collapsed {
			return c
		}
	}
	return nil
}

// columnSpread returns the largest range (max − min) of the columns of a
// rows × cols row-major array with the given stride; NaN counts as no
// range.
func columnSpread(a []float64, stride, cols, rows int) float64 {
	best := 0.0
	for k := 0; k < cols; k++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for r := 0; r < rows; r++ {
			v := a[r*stride+k]
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		if hi > lo {
			best = math.Max(best, hi-lo)
		}
	}
	return best
}

// medianOf returns the median of the values of a rows × cols array.
func medianOf(a []float64, stride, cols, rows int) float64 {
	vs := make([]float64, 0, rows*cols)
	for r := 0; r < rows; r++ {
		vs = append(vs, a[r*stride:r*stride+cols]...)
	}
	if len(vs) == 0 {
		return 0
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}
