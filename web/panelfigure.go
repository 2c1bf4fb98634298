package web

import (
	"bytes"
	"math"
	"net/url"
	"strconv"
	"strings"

	"dgpviz/internal/slides"
	"dgpviz/internal/stream"
	"dgpviz/internal/wire"
)

// Downloads of the page's panels as slides (internal/slides): 16:9 with a
// title, labelled axes, a legend and a caption line (the data, the
// iteration, the bound). Besides the fit, the message figure, the latent
// views and the faces map (figure.go, latent.go, faces.go; shape=paper
// gives their paper figures instead):
//
//	GET /figure/layer.{svg,png,pdf}?session=KEY&layer=i   a layer panel (i from 0, a 1-D → 1-D layer)
//	GET /figure/bound.{svg,png,pdf}?session=KEY           the bound over iterations
//	GET /figure/depth.{svg,png,pdf}?session=KEY           the depth comparison (once it has run)
//
// and &pin=P for the snapshot a download menu pinned (pin.go).

// figureNames are the figures /figure/ draws; figureParams their
// parameters.
var (
	figureNames  = []string{"messages", "fit", "layer", "bound", "depth", "samples", "latent", "faces"}
	figureParams = []string{"session", "pin", "shape", "layer", "inputs", "preset", "samples", "units", "grid"}
)

// slideShape reports whether the request wants the slide (the default)
// rather than the paper figure.
func slideShape(q url.Values) bool { return q.Get("shape") != "paper" }

// captionOf is a download's caption: the session's data, iteration and
// bound.
func captionOf(fs *stream.FigureSession, note string) slides.Caption {
	c := slides.Caption{Dataset: fs.Dataset, Iter: fs.Iter, Bound: math.NaN(), Note: note}
	if fs.Data != nil && (strings.HasPrefix(fs.Dataset, "data-") || strings.HasPrefix(fs.Dataset, "model-")) {
		c.Dataset = fs.Data.Description // a private data set's name means nothing to a reader
	}
	if fs.Snapshot != nil && fs.Snapshot.Eval != nil {
		c.Bound = fs.Snapshot.Eval.Bound
	}
	return c
}

// axisName is a column's name with its unit: "x (s)".
func axisName(names []string, unit string) string {
	name := "x"
	if len(names) > 0 && names[0] != "" {
		name = names[0]
	}
	if unit != "" {
		return name + " (" + unit + ")"
	}
	return name
}

func onlyParams(q url.Values, what string, allowed ...string) error {
	for k := range q {
		if !contains(append([]string{"session", "pin", "shape"}, allowed...), k) {
			return bad("parameter %q does not apply to the %s", k, what)
		}
	}
	if q.Get("shape") == "paper" {
		return bad("the %s is drawn as a slide only (shape=slide)", what)
	}
	return nil
}

// layerFigure draws layer "layer" (counted from 1, as on the page) of the
// session's model.
func layerFigure(buf *bytes.Buffer, format string, fs *stream.FigureSession, q url.Values) error {
	if err := onlyParams(q, "layer figure", "layer"); err != nil {
		return err
	}
	l, err := strconv.Atoi(q.Get("layer"))
	if err != nil {
		return bad("layer %q is not a whole number", truncate(q.Get("layer"), 40))
	}
	if l < 1 || l > len(fs.Model.Layers) {
		return bad("layer %d out of range: the model has layers 1…%d", l, len(fs.Model.Layers))
	}
	li := l - 1
	var in, out []string
	if fs.Data != nil {
		in, out = fs.Data.InputNames, fs.Data.OutputNames
	}
	ld, err := slides.Layer(fs.Model, fs.Snapshot.Eval, li, fs.NormX, fs.NormY, axisName(in, unitOf(fs, true)), axisName(out, unitOf(fs, false)))
	if err != nil {
		return bad("%s", strings.TrimPrefix(err.Error(), "slides: "))
	}
	return slides.RenderLayer(buf, format, ld, captionOf(fs, ""))
}

func unitOf(fs *stream.FigureSession, input bool) string {
	if fs.Data == nil {
		return ""
	}
	if input {
		return fs.Data.InputUnit
	}
	return fs.Data.OutputUnit
}

// boundFigure draws the session's bound over iterations.
func boundFigure(buf *bytes.Buffer, format string, fs *stream.FigureSession, q url.Values) error {
	if err := onlyParams(q, "bound figure"); err != nil {
		return err
	}
	h := fs.History
	if h == nil || len(h.Iter) < 2 {
		return bad("the bound has fewer than 2 points yet: let the optimizer run")
	}
	return slides.Bound(buf, format, &slides.History{Layers: h.Layers, Iter: h.Iter, Bound: h.Bound, Likelihood: h.Likelihood,
		KL: h.KL, Compression: h.Compression, Propagn: h.Propagation}, captionOf(fs, ""))
}

// depthFigure draws the session's last finished depth comparison (the
// "compare" message its page got), in the data's original units.
func depthFigure(buf *bytes.Buffer, format string, fs *stream.FigureSession, q url.Values) error {
	if err := onlyParams(q, "depth figure"); err != nil {
		return err
	}
	b := fs.Views["compare"]
	if b == nil {
		return bad("the depth comparison has not been run on these data: press “Compare 1, 2, 3 layers” first")
	}
	m, err := wire.Decode(b)
	if err != nil || m["done"] != true {
		return bad("the depth comparison is still running: download it when it is done")
	}
	if len(fs.NormX.Mean) != 1 || len(fs.NormY.Mean) != 1 {
		return bad("the depth comparison needs data with one input and one output")
	}
	sx, mx, sy, my := fs.NormX.Scale[0], fs.NormX.Mean[0], fs.NormY.Scale[0], fs.NormY.Mean[0]
	xs, _ := m["x"].([]float64)
	x := make([]float64, len(xs))
	for i, v := range xs {
		x[i] = v*sx + mx
	}
	var depths []slides.Depth
	ds, _ := m["depths"].([]any)
	for _, v := range ds {
		d, _ := v.(map[string]any)
		if d == nil {
			continue
		}
		dp := slides.Depth{Layers: int(num(d["layers"])), Bound: num(d["bound"]), Rise: num(d["rise"])}
		mean, _ := d["mean"].([]float64)
		sd, _ := d["sd"].([]float64)
		if len(mean) == len(x) && len(sd) == len(x) {
			for i := range x {
				dp.Mean = append(dp.Mean, mean[i]*sy+my)
				dp.SD = append(dp.SD, sd[i]*sy)
			}
		}
		depths = append(depths, dp)
	}
	var dx, dy []float64
	if fs.Model != nil {
		n, _ := fs.Model.X.Dims()
		for i := 0; i < n; i++ {
			dx = append(dx, fs.Model.X.At(i, 0)*sx+mx)
			dy = append(dy, fs.Model.Y.At(i, 0)*sy+my)
		}
	}
	var in, out []string
	if fs.Data != nil {
		in, out = fs.Data.InputNames, fs.Data.OutputNames
	}
	return slides.RenderDepth(buf, format, x, depths, dx, dy, axisName(in, unitOf(fs, true)), axisName(out, unitOf(fs, false)), captionOf(fs, ""))
}

// num is a decoded JSON number, NaN when absent or null.
func num(v any) float64 {
	if f, ok := v.(float64); ok {
		return f
	}
	return math.NaN()
}
