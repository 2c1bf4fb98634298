package view

import (
	"fmt"
	"math"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/slides"
	"dgpviz/internal/train"

	"gonum.org/v1/gonum/mat"
)

// LayerSlide computes layer li's panel (slides.RenderLayer draws it) of model m with its evaluation ev (the
// optimizer's: the hidden layers' messages and the penalties), for a
// layer with 1-D input and output; nx and ny undo the data's
// normalisation, names name the axes.
func LayerSlide(m *engine.Model, ev *train.Evaluation, li int, nx, ny dataset.Normalizer, inputName, outputName string) (*slides.LayerData, error) {
	if li < 0 || li >= len(m.Layers) {
		return nil, fmt.Errorf("there is no layer %d (the model has %d)", li+1, len(m.Layers))
	}
	l := m.Layers[li]
	if _, q, d := l.Dims(); q != 1 || d != 1 {
		return nil, fmt.Errorf("layer %d maps %d-D to %d-D; the layer figure draws a 1-D input and output", li+1, q, d)
	}
	if ev == nil {
		return nil, fmt.Errorf("the model could not be evaluated")
	}
	n, _ := m.X.Dims()
	last := li == len(m.Layers)-1
	var inMean, inVar *mat.Dense
	if li > 0 {
		if li-1 >= len(ev.Hidden) {
			return nil, fmt.Errorf("the evaluation has no messages into layer %d", li+1)
		}
		inMean, inVar = ev.Hidden[li-1].Mean, ev.Hidden[li-1].Var
	}
	var out engine.Message
	if last {
		var e engine.Evaluator
		msgs, err := e.Predict(m, m.X)
		if err != nil {
			return nil, err
		}
		out = msgs[len(msgs)-1]
	} else {
		out = ev.Hidden[li]
	}
	// units: the data's original ones where the page shows them
	sx, mx, sy, my := 1.0, 0.0, 1.0, 0.0
	ld := &slides.LayerData{Index: li, Layers: len(m.Layers), XLabel: fmt.Sprintf("h%d (hidden layer %d output)", li, li), YLabel: fmt.Sprintf("h%d", li+1)}
	if li == 0 {
		ld.XLabel = "input " + inputName
		if len(nx.Mean) == 1 {
			sx, mx = nx.Scale[0], nx.Mean[0]
		}
	}
	if last {
		ld.YLabel = "output " + outputName
		if len(ny.Mean) == 1 {
			sy, my = ny.Scale[0], ny.Mean[0]
		}
	}
	post, err := engine.NewLayerPosterior(l, m.Jitter)
	if err != nil {
		return nil, err
	}
	lo, hi := GridRange(m, li, inMean, inVar)
	const g = 200
	xs := Linspace(make([]float64, g), lo, hi)
	mean, varU, varCond := make([]float64, g), make([]float64, g), make([]float64, g)
	var fs engine.FunctionScratch
	post.FunctionOn(xs, mean, varU, varCond, &fs)
	for i := range xs {
		ld.GridX = append(ld.GridX, xs[i]*sx+mx)
		ld.Mean = append(ld.Mean, mean[i]*sy+my)
		ld.SDF = append(ld.SDF, math.Sqrt(math.Max(0, varU[i]+varCond[i]))*sy)
		ld.SDY = append(ld.SDY, math.Sqrt(math.Max(0, varU[i]+varCond[i]+l.NoiseVariance))*sy)
	}
	mz, _, _ := l.Dims()
	um := l.InducingMarginals()
	for k := 0; k < mz; k++ {
		ld.Z = append(ld.Z, l.InducingInputs.At(k, 0)*sx+mx)
		ld.U = append(ld.U, l.QMu.At(k, 0)*sy+my)
		ld.USD = append(ld.USD, math.Sqrt(math.Max(0, um[k]))*sy)
	}
	for i := 0; i < n; i++ {
		in, insd := m.X.At(i, 0), 0.0
		if li > 0 {
			in, insd = inMean.At(i, 0), math.Sqrt(math.Max(0, inVar.At(i, 0)))
		}
		ld.InMean = append(ld.InMean, in*sx+mx)
		ld.InSD = append(ld.InSD, insd*sx)
		ld.OutMean = append(ld.OutMean, out.Mean.At(i, 0)*sy+my)
		ld.OutSD = append(ld.OutSD, math.Sqrt(math.Max(0, out.Var.At(i, 0)))*sy)
		if last {
			ld.Y = append(ld.Y, m.Y.At(i, 0)*sy+my)
		}
	}
	if li < len(ev.Layers) && len(ev.Layers[li].CompressionPerDatum) == n {
		ld.CompressionPerDatum, ld.PropagationPerDatum = ev.Layers[li].CompressionPerDatum, ev.Layers[li].PropagationPerDatum
	}
	return ld, nil
}
