package regression

import (
	"bytes"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"dgpviz/internal/dataset"
	"dgpviz/internal/fitfigure"
	"dgpviz/internal/montecarlo"
	"dgpviz/internal/slides"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"
)

// The regression's downloads: besides every view's (view.CommonFigures),
//
//	GET /figure/messages.{svg,png,pdf}?session=KEY[&layer=L][&inputs=m:v,m:v…|&preset=NAME][&samples=N][&units=model]
//	GET /figure/fit.{svg,png,pdf}?session=KEY
//	GET /figure/depth.{svg,png,pdf}?session=KEY
//
// Absent layer/inputs take the session's live message figure (or the
// first 1-D layer and the paper's preset). Layers count from 1, as on the
// page. The message figure is drawn in the data's original units where
// the page does (layer 1's input, the last layer's output), and inputs
// are in the units of its input axis; units=model keeps normalised units
// for both.

// Figures: the message figure, the fit and the depth comparison, and
// every view's.
func (v *View) Figures() []view.Figure {
	return append([]view.Figure{
		{Name: "messages", Draw: v.messagesFigure},
		{Name: "fit", Draw: fitFigure},
		{Name: "depth", Draw: depthFigure},
		{Name: "samples", Draw: samplesFigure}, // samplesfigure.go
	}, view.CommonFigures()...)
}

// FigureState is the live message figure's request, which the message
// figure's download draws when the request names no other.
func (v *View) FigureState() string {
	layer, ins, samples, live := v.FigureRequest()
	return fmt.Sprint(layer, ins, samples, live)
}

func (v *View) messagesFigure(buf *bytes.Buffer, format string, d *view.Download, q url.Values) error {
	if q.Has("grid") {
		return view.Bad("parameter \"grid\" does not apply to the message figure")
	}
	m := d.Model
	units := q.Get("units")
	if units != "" && units != "model" && units != "original" {
		return view.Bad("units %q: want original (default) or model", units)
	}
	layer, ins, samples, live := v.FigureRequest() // layer from 0, inputs in model units
	if !live {
		layer, samples = montecarlo.FirstFigureLayer(m), FigureDefaultSamples
	}
	if s := q.Get("layer"); s != "" {
		l, err := strconv.Atoi(s)
		if err != nil {
			return view.Bad("layer %q is not a whole number", wire.Truncate(s, 20))
		}
		if l < 1 || l > len(m.Layers) {
			return view.Bad("layer %d out of range: the model has layers 1…%d", l, len(m.Layers))
		}
		if l-1 != layer {
			ins = nil
		}
		layer = l - 1
	}
	if _, qd, dd := m.Layers[layer].Dims(); qd != 1 || dd != 1 {
		return view.Bad("layer %d has %d input and %d output dimensions; the message figure needs 1 and 1", layer+1, qd, dd)
	}
	if s := q.Get("samples"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < FigureMinSamples || n > FigureMaxSamples {
			return view.Bad("samples %q out of range %d…%d", wire.Truncate(s, 20), FigureMinSamples, FigureMaxSamples)
		}
		samples = n
	}
	if q.Has("inputs") && q.Has("preset") {
		return view.Bad("give inputs or preset, not both")
	}
	if s := q.Get("inputs"); q.Has("inputs") {
		toModel := func(ins []montecarlo.GaussianInput) []montecarlo.GaussianInput {
			if units == "model" {
				return ins
			}
			return montecarlo.InputsToModel(ins, d.NormX, layer)
		}
		parsed, err := parseInputs(s, toModel)
		if err != nil {
			return err
		}
		ins = parsed
	}
	preset := q.Get("preset")
	if q.Has("preset") && !slices.Contains(montecarlo.InputSetNames(), preset) {
		return view.Bad("unknown preset %q (want one of %s)", wire.Truncate(preset, 40), strings.Join(montecarlo.InputSetNames(), ", "))
	}
	if ins == nil && preset == "" {
		preset = montecarlo.InputSetPaper
	}
	if preset != "" {
		ps, err := montecarlo.InputSets(m, layer)
		if err != nil {
			return view.Bad("presets: %v", err)
		}
		ins = ps[preset]
	}
	fd, err := montecarlo.MessageFigure(m, layer, ins, samples, 1)
	if err != nil {
		return view.Bad("%v", err)
	}
	if units != "model" {
		var xUnit, yUnit string
		if d.Data != nil {
			xUnit, yUnit = d.Data.InputUnit, d.Data.OutputUnit
		}
		fd.ToOriginal(d.NormX, d.NormY, len(m.Layers), xUnit, yUnit)
	}
	if view.SlideShape(q) {
		return slides.Messages(buf, format, fd, d.Caption(fmt.Sprintf("%d samples per input", samples)))
	}
	return montecarlo.RenderMessageFigure(buf, format, fd)
}

// parseInputs reads "mean:var,mean:var,…", converts them to model units
// with toModel and checks them against the message figure's limits.
func parseInputs(s string, toModel func([]montecarlo.GaussianInput) []montecarlo.GaussianInput) ([]montecarlo.GaussianInput, error) {
	ins, err := montecarlo.ParseGaussianInputs(s)
	if err != nil {
		return nil, view.Bad("inputs: %v", err)
	}
	model := toModel(ins)
	if err := CheckFigureInputs(model); err != nil {
		if model[0] != ins[0] { // the limits are the model's
			return nil, view.Bad("inputs: %v (in the model's normalised units)", err)
		}
		return nil, view.Bad("inputs: %v", err)
	}
	return model, nil
}

func fitFigure(buf *bytes.Buffer, format string, d *view.Download, q url.Values) error {
	for _, k := range []string{"layer", "inputs", "preset", "samples", "units", "grid"} {
		if q.Has(k) {
			return view.Bad("parameter %q does not apply to the fit figure", k)
		}
	}
	fd, err := fitfigure.FitFigure(d.Model, d.NormX, d.NormY, 0)
	if err != nil {
		return view.Bad("%v", err)
	}
	if view.SlideShape(q) {
		return slides.Fit(buf, format, fd, d.AxisName(true), d.AxisName(false), d.Caption(""))
	}
	if d.Data != nil {
		fd.XName, fd.YName = dataset.InputColumns(d.Data.InputNames, 1)[0], dataset.LayerColumns(0, 1, 1, d.Data.OutputNames)[0]
		fd.XUnit, fd.YUnit = d.Data.InputUnit, d.Data.OutputUnit
	}
	return fitfigure.RenderFit(buf, format, []*fitfigure.FitData{fd})
}

// depthFigure draws the session's last finished depth comparison (the
// "compare" message its page got), in the data's original units.
func depthFigure(buf *bytes.Buffer, format string, d *view.Download, q url.Values) error {
	if err := view.OnlyParams(q, "depth figure"); err != nil {
		return err
	}
	b := d.Views["compare"]
	if b == nil {
		return view.Bad("the depth comparison has not been run on these data: press “Compare 1, 2, 3 layers” first")
	}
	m, err := wire.Decode(b)
	if err != nil || m["done"] != true {
		return view.Bad("the depth comparison is still running: download it when it is done")
	}
	if len(d.NormX.Mean) != 1 || len(d.NormY.Mean) != 1 {
		return view.Bad("the depth comparison needs data with one input and one output")
	}
	sx, mx, sy, my := d.NormX.Scale[0], d.NormX.Mean[0], d.NormY.Scale[0], d.NormY.Mean[0]
	xs, _ := m["x"].([]float64)
	x := make([]float64, len(xs))
	for i, v := range xs {
		x[i] = v*sx + mx
	}
	var depths []slides.Depth
	ds, _ := m["depths"].([]any)
	for _, v := range ds {
		dm, _ := v.(map[string]any)
		if dm == nil {
			continue
		}
		dp := slides.Depth{Layers: int(num(dm["layers"])), Bound: num(dm["bound"]), Rise: num(dm["rise"])}
		mean, _ := dm["mean"].([]float64)
		sd, _ := dm["sd"].([]float64)
		if len(mean) == len(x) && len(sd) == len(x) {
			for i := range x {
				dp.Mean = append(dp.Mean, mean[i]*sy+my)
				dp.SD = append(dp.SD, sd[i]*sy)
			}
		}
		depths = append(depths, dp)
	}
	var dx, dy []float64
	if d.Model != nil {
		n, _ := d.Model.X.Dims()
		for i := 0; i < n; i++ {
			dx = append(dx, d.Model.X.At(i, 0)*sx+mx)
			dy = append(dy, d.Model.Y.At(i, 0)*sy+my)
		}
	}
	return slides.RenderDepth(buf, format, x, depths, dx, dy, d.AxisName(true), d.AxisName(false), d.Caption(""))
}

// num is a decoded JSON number, NaN when absent or null.
func num(v any) float64 {
	if f, ok := v.(float64); ok {
		return f
	}
	return math.NaN()
}
