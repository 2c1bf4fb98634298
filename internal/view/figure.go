package view

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
	"dgpviz/internal/slides"
	"dgpviz/internal/train"
	"dgpviz/internal/wire"
)

// Figure downloads (GET /figure/NAME.FORMAT, docs/protocol.md
// "Downloads"): each view lists the figures it draws (View.Figures), and
// the web handler finds the one a request names there, so that it knows
// no view. Every view draws the bound, the latent views and its 1-D
// layers (CommonFigures); the regression adds the fit, the message
// figure and the depth comparison, the autoencoder the faces map.

// Download is what a figure download draws: a session's latest published
// snapshot (a private copy: safe to read while the optimizer runs), its
// view, and what the followers' hub keeps of the session.
type Download struct {
	Model        *engine.Model
	Snapshot     *Snapshot
	View         View
	Data         *dataset.Dataset // the session's data set (shared, read-only)
	Iter         int
	Dataset      string
	NormX, NormY dataset.Normalizer // the session's normalisation (private copies)
	// History is the bound over iterations (a copy), Views the latest of
	// the view's messages by type (the depth comparison's "compare"): the
	// bound panel's and the depth panel's downloads draw them.
	History *train.History
	Views   map[string][]byte
}

// A Figure is a download a view draws.
type Figure struct {
	Name string // the path's name: "fit" for /figure/fit.svg
	CSV  bool   // it is also a table (.csv) besides svg, png and pdf
	// Draw writes the figure of d in format ("svg", "png", "pdf" or
	// "csv") with the request's parameters q to buf. A problem of the
	// request is a BadRequest.
	Draw func(buf *bytes.Buffer, format string, d *Download, q url.Values) error
}

// A FigureStater is a view whose figures draw state of its own besides
// the published model (the regression's live message figure): a cache
// of drawn figures keys them by it too.
type FigureStater interface {
	FigureState() string
}

// FindFigure returns v's figure of that name.
func FindFigure(v View, name string) (Figure, bool) {
	for _, f := range v.Figures() {
		if f.Name == name {
			return f, true
		}
	}
	return Figure{}, false
}

// BadRequest is a download request's problem, for people (HTTP 400).
type BadRequest struct{ Msg string }

func (b BadRequest) Error() string { return b.Msg }

// Bad returns a BadRequest.
func Bad(format string, args ...any) error { return BadRequest{fmt.Sprintf(format, args...)} }

// IsBadRequest reports whether err is a BadRequest, and returns it.
func IsBadRequest(err error) (BadRequest, bool) {
	var b BadRequest
	ok := errors.As(err, &b)
	return b, ok
}

// SlideShape reports whether the request wants the slide (the default)
// rather than the paper figure.
func SlideShape(q url.Values) bool { return q.Get("shape") != "paper" }

// Caption is a download's caption: the session's data, iteration and
// bound.
func (d *Download) Caption(note string) slides.Caption {
	c := slides.Caption{Dataset: d.Dataset, Iter: d.Iter, Bound: math.NaN(), Note: note}
	if d.Data != nil && (strings.HasPrefix(d.Dataset, "data-") || strings.HasPrefix(d.Dataset, "model-")) {
		c.Dataset = d.Data.Description // a private data set's name means nothing to a reader
	}
	if d.Snapshot != nil && d.Snapshot.Eval != nil {
		c.Bound = d.Snapshot.Eval.Bound
	}
	return c
}

// AxisName is the first input's (input) or output's name with its unit:
// "x (s)".
func (d *Download) AxisName(input bool) string {
	var names []string
	unit := ""
	if d.Data != nil {
		names, unit = d.Data.OutputNames, d.Data.OutputUnit
		if input {
			names, unit = d.Data.InputNames, d.Data.InputUnit
		}
	}
	name := "x"
	if len(names) > 0 && names[0] != "" {
		name = names[0]
	}
	if unit != "" {
		return name + " (" + unit + ")"
	}
	return name
}

// OnlyParams refuses parameters of q but session, pin, shape and allowed,
// and the paper shape: what is drawn as a slide only.
func OnlyParams(q url.Values, what string, allowed ...string) error {
	for k := range q {
		if !slices.Contains(append([]string{"session", "pin", "shape"}, allowed...), k) {
			return Bad("parameter %q does not apply to the %s", k, what)
		}
	}
	if q.Get("shape") == "paper" {
		return Bad("the %s is drawn as a slide only (shape=slide)", what)
	}
	return nil
}

// CommonFigures are the figures of every view: its 1-D layers, the bound
// and the latent views.
func CommonFigures() []Figure {
	return []Figure{
		{Name: "layer", Draw: layerFigure},
		{Name: "bound", Draw: boundFigure},
		{Name: "latent", CSV: true, Draw: latentFigure},
	}
}

// layerFigure draws layer "layer" (counted from 1, as on the page) of the
// session's model.
func layerFigure(buf *bytes.Buffer, format string, d *Download, q url.Values) error {
	if err := OnlyParams(q, "layer figure", "layer"); err != nil {
		return err
	}
	l, err := strconv.Atoi(q.Get("layer"))
	if err != nil {
		return Bad("layer %q is not a whole number", wire.Truncate(q.Get("layer"), 40))
	}
	if l < 1 || l > len(d.Model.Layers) {
		return Bad("layer %d out of range: the model has layers 1…%d", l, len(d.Model.Layers))
	}
	ld, err := LayerSlide(d.Model, d.Snapshot.Eval, l-1, d.NormX, d.NormY, d.AxisName(true), d.AxisName(false))
	if err != nil {
		return Bad("%v", err)
	}
	return slides.RenderLayer(buf, format, ld, d.Caption(""))
}

// boundFigure draws the session's bound over iterations.
func boundFigure(buf *bytes.Buffer, format string, d *Download, q url.Values) error {
	if err := OnlyParams(q, "bound figure"); err != nil {
		return err
	}
	if d.History == nil || d.History.Len() < 2 {
		return Bad("the bound has fewer than 2 points yet: let the optimizer run")
	}
	return slides.Bound(buf, format, d.History, d.Caption(""))
}

// latentFigure writes the session's latent coordinates — every layer's
// message at the training inputs — as CSV, or the latent-space figure
// (hidden layers with ≥ 2 dimensions, coloured by the first input, with the
// true path when the data set has one) as svg, png or pdf.
//
//	GET /figure/latent.{csv,svg,png,pdf}?session=KEY
func latentFigure(buf *bytes.Buffer, format string, d *Download, q url.Values) error {
	for _, k := range []string{"layer", "inputs", "preset", "samples", "units", "grid"} {
		if q.Has(k) {
			return Bad("parameter %q does not apply to the latent export", k)
		}
	}
	if d.Data == nil {
		return Bad("the session has no data set yet")
	}
	if format == "csv" {
		t, err := latent.ModelTable(d.Model, d.Data, d.NormX, d.NormY)
		if err != nil {
			return err
		}
		return latent.WriteCSV(buf, t)
	}
	f, err := latent.ModelFigure(d.Model, d.Data)
	if errors.Is(err, latent.ErrNoLatent) {
		return Bad("the model has no hidden layer with 2 or more dimensions to draw")
	}
	if err != nil {
		return err
	}
	if SlideShape(q) {
		return slides.Latent(buf, format, f, d.Caption(""))
	}
	return latent.RenderFigure(buf, format, f)
}
