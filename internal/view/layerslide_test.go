package view

import (
	"bytes"
	"image/png"
	"math"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/modelfile"
	"dgpviz/internal/slides"
	"dgpviz/internal/train"
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
	mf, err := modelfile.ReadFile("../engine/testdata/step3_fitted.json")
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
		ld, err := LayerSlide(m, eval, li, nx, ny, "x", "y")
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
		for i := range ld.CompressionPerDatum {
			comp += ld.CompressionPerDatum[i]
			prop += ld.PropagationPerDatum[i]
		}
		if lt := r.Layers[li]; math.Abs(comp-lt.Compression) > 1e-6*(1+lt.Compression) || math.Abs(prop-lt.Propagation) > 1e-6*(1+lt.Propagation) {
			t.Errorf("layer %d: penalties add up to %v and %v, the terms are %v and %v", li+1, comp, prop, lt.Compression, lt.Propagation)
		}
		var b bytes.Buffer
		if err := slides.RenderLayer(&b, "png", ld, slides.Caption{Dataset: "step", Iter: 7, Bound: r.Bound}); err != nil {
			t.Fatal(err)
		}
		if cfg, err := png.DecodeConfig(&b); err != nil || cfg.Width != 1600 || cfg.Height != 900 {
			t.Errorf("layer %d: %v, %d × %d, want 1600 × 900", li+1, err, cfg.Width, cfg.Height)
		}
	}
	if _, err := LayerSlide(m, eval, 3, nx, ny, "x", "y"); err == nil || !strings.Contains(err.Error(), "no layer 4") {
		t.Errorf("layer 4 of 3: %v", err)
	}
}
