package slides

import (
	"bytes"
	"image/png"
	"math"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/train"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// TestLayer checks the layer figure's numbers against independent
// computations on the fitted step model, drawn in units a normalisation
// (scale 2, mean 5 for the input; 0.5 and −1 for the output) gives:
// the first layer's inputs are the data's, the last layer's outgoing
// messages are the model's prediction at the data (engine.Predict), the
// function's mean at an inducing input is that point's q(u) mean (the
// posterior mean k(z, Z)Kuu⁻¹m at Z is m), and each datum's penalties add
// up to the layer's terms of the bound (to 1e-6 nats: the totals are
// summed another way, and a panel shows 4 digits).
func TestLayer(t *testing.T) {
	mf, err := engine.ReadModelFile("../engine/testdata/step3_fitted.json")
	if err != nil {
		t.Fatal(err)
	}
	m := mf.Model
	var ev engine.Evaluator
	r, _, err := ev.Evaluate(m, engine.Options{NoOutputMessage: true})
	if err != nil {
		t.Fatal(err)
	}
	eval := train.NewEvaluation(r)
	nx := dataset.Normalizer{Mean: []float64{5}, Scale: []float64{2}}
	ny := dataset.Normalizer{Mean: []float64{-1}, Scale: []float64{0.5}}
	n, _ := m.X.Dims()
	msgs, err := ev.Predict(m, m.X)
	if err != nil {
		t.Fatal(err)
	}
	for li := range m.Layers {
		ld, err := Layer(m, eval, li, nx, ny, "x", "y")
		if err != nil {
			t.Fatal(err)
		}
		last := li == len(m.Layers)-1
		for i := 0; i < n; i++ {
			if li == 0 && ld.InMean[i] != m.X.At(i, 0)*2+5 {
				t.Fatalf("layer 1: input %d is %v, the datum %v", i, ld.InMean[i], m.X.At(i, 0)*2+5)
			}
			if last && math.Abs(ld.OutMean[i]-(msgs[len(msgs)-1].Mean.At(i, 0)*0.5-1)) > 1e-12 {
				t.Fatalf("last layer: message %d is %v, the prediction %v", i, ld.OutMean[i], msgs[len(msgs)-1].Mean.At(i, 0)*0.5-1)
			}
		}
		// the function's mean at each inducing input inside the grid, by
		// linear interpolation of the grid: its q(u) mean
		for k, z := range ld.Z {
			j := 1
			for j < len(ld.GridX)-1 && ld.GridX[j] < z {
				j++
			}
			a := (z - ld.GridX[j-1]) / (ld.GridX[j] - ld.GridX[j-1])
			f := ld.Mean[j-1]*(1-a) + ld.Mean[j]*a
			if d := math.Abs(f - ld.U[k]); d > 0.02*(1+math.Abs(ld.U[k])) {
				t.Errorf("layer %d: the function's mean at z%d = %v is %v, its q(u) mean %v", li+1, k+1, z, f, ld.U[k])
			}
		}
		var comp, prop float64
		for i := range ld.Comp {
			comp += ld.Comp[i]
			prop += ld.Prop[i]
		}
		if lt := r.Layers[li]; math.Abs(comp-lt.Compression) > 1e-6*(1+lt.Compression) || math.Abs(prop-lt.Propagation) > 1e-6*(1+lt.Propagation) {
			t.Errorf("layer %d: penalties add up to %v and %v, the terms are %v and %v", li+1, comp, prop, lt.Compression, lt.Propagation)
		}
		var b bytes.Buffer
		if err := RenderLayer(&b, "png", ld, Caption{Dataset: "step", Iter: 7, Bound: r.Bound}); err != nil {
			t.Fatal(err)
		}
		if cfg, err := png.DecodeConfig(&b); err != nil || cfg.Width != 1600 || cfg.Height != 900 {
			t.Errorf("layer %d: %v, %d × %d, want 1600 × 900", li+1, err, cfg.Width, cfg.Height)
		}
	}
	if _, err := Layer(m, eval, 3, nx, ny, "x", "y"); err == nil || !strings.Contains(err.Error(), "no layer 4") {
		t.Errorf("layer 4 of 3: %v", err)
	}
}

// TestCaption: the caption line names the data, the iteration and the
// bound with a true minus sign, and leaves out a bound that is not a
// number.
func TestCaption(t *testing.T) {
	for _, tc := range []struct {
		c    Caption
		want string
	}{
		{Caption{Dataset: "step", Iter: 937, Bound: -0.7551}, "dgpviz · step · iteration 937 · bound −0.7551 nats"},
		{Caption{Dataset: "step", Iter: 0, Bound: math.NaN(), Note: "500 samples per input"}, "dgpviz · step · iteration 0 · 500 samples per input"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

// TestWrap: a line too long for the slide breaks between words into lines
// that each fit, with every word kept in order; a line that fits is kept.
func TestWrap(t *testing.T) {
	sty := plot.New().X.Tick.Label
	sty.Font.Size = vg.Points(6.5)
	long := strings.Repeat("propagation 0.0378 · compression 0.019 · W₁ 0.0017 ", 8)
	width := Width - 5*vg.Millimeter
	got := wrap(sty, long, width)
	lines := strings.Split(got, "\n")
	if len(lines) < 2 {
		t.Fatalf("%d lines, want the text broken", len(lines))
	}
	for _, l := range lines {
		if w := sty.Width(l); w > width {
			t.Errorf("line %q is %v wide, more than %v", l, w, width)
		}
	}
	if strings.Join(lines, " ") != strings.Join(strings.Fields(long), " ") {
		t.Errorf("words lost or reordered: %q", got)
	}
	if short := "iteration 20 · bound −46.74 nats"; wrap(sty, short, width) != short {
		t.Errorf("a short line was changed: %q", wrap(sty, short, width))
	}
}

// TestBoundAxis: after an edit that cost thousands of nats and the
// repair, the chart leaves the spike off and keeps the latest bound
// readable (its range at least a tenth of the chart's); while the repair
// is under way, the spike is the latest bound and stays on; a history
// without a spike loses nothing.
func TestBoundAxis(t *testing.T) {
	history := func(spikeAt, n int) (b, l []float64) {
		for k := range n {
			v := -50 + 49*float64(k)/float64(n-1) // rising towards −1
			if k >= spikeAt && k < spikeAt+5 {
				v = -5102 * (1 - float64(k-spikeAt)/5) // the edit, repaired in 5 points
			}
			b, l = append(b, v), append(l, v+40)
		}
		return b, l
	}
	b, l := history(60, 100)
	lo, hi, low := BoundAxis(b, l)
	if low != -5102 || lo < -200 || lo > -2 {
		t.Errorf("after the repair: axis [%.1f, %.1f], lowest %.1f; want the spike (−5102) off a chart that shows the last bounds", lo, hi, low)
	}
	if last := b[len(b)-1]; (l[len(l)-1]-last)/(hi-lo) < 0.1 {
		t.Errorf("the latest bound and likelihood span %.1f of a %.1f-nat chart", l[len(l)-1]-last, hi-lo)
	}
	b, l = history(95, 100)
	if lo, _, low := BoundAxis(b, l); lo > low {
		t.Errorf("during the repair the axis starts at %.1f, above the latest bound %.1f", lo, low)
	}
	b, l = history(1000, 100)
	if lo, _, low := BoundAxis(b, l); lo > low {
		t.Errorf("no spike: the axis starts at %.1f, above the lowest bound %.1f", lo, low)
	}
}
