package web

import (
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/fitfigure"
	"dgpviz/internal/montecarlo"
	"dgpviz/internal/plotkit"
	"dgpviz/internal/slides"
	"dgpviz/internal/stream"
	"dgpviz/internal/view/regression"
)

// FigureBackend finds a live session's model for figure downloads;
// *stream.Server implements it. New mounts /figure/ when the Backend does.
type FigureBackend interface {
	FigureSession(key string) (*stream.FigureSession, bool)
}

// Download limits.
const (
	figureMaxSamples = regression.FigureMaxSamples
	figureMinSamples = regression.FigureMinSamples
)

// figureHandler serves
//
//	GET /figure/messages.{svg,png,pdf}?session=KEY[&layer=L][&inputs=m:v,m:v…|&preset=NAME][&samples=N][&units=model]
//	GET /figure/fit.{svg,png,pdf}?session=KEY
//
// for the session whose hello carried figure_key KEY, from its latest
// published model (a private copy, so no race with the optimizer). Absent
// layer/inputs take the session's live message figure (or the first 1-D
// layer and the paper's preset). Layers count from 1, as on the page. The
// message figure is drawn in the data's original units where the page
// does (layer 1's input, the last layer's output), and inputs are in the
// units of its input axis; units=model keeps normalised units for both.
// Bad parameters get 400 with the reason, an unknown or ended session 404.
type figureHandler struct {
	b    FigureBackend
	log  *slog.Logger
	gate *renderGate
	pins *pinStore // pin.go
}

// renderGate bounds figure rendering so that downloads cannot starve the
// live sessions of the CPU: one figure is drawn at a time (others wait, up
// to renderWait, then get 503), and a figure of an unchanged model with the
// same parameters is served from a small cache.
type renderGate struct {
	renders atomic.Int64 // figures drawn (for tests and logs)
	sem     chan struct{}
	rate    *clientRate // renders per client address (ratelimit.go)
	mu      sync.Mutex
	cache   map[renderKey][]byte
	order   []renderKey // oldest first
}

// renderKey identifies a drawn figure: the session's published model (a
// new one per publication, so the pointer says "unchanged"), the live
// figure's state and the request.
type renderKey struct {
	model *engine.Model
	live  string
	name  string
	query string
}

const (
	renderWait   = 20 * time.Second
	renderCached = 16
)

func newRenderGate(rate *clientRate) *renderGate {
	return &renderGate{sem: make(chan struct{}, 1), cache: map[renderKey][]byte{}, rate: rate}
}

func (g *renderGate) get(k renderKey) ([]byte, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	b, ok := g.cache[k]
	return b, ok
}

func (g *renderGate) put(k renderKey, b []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.cache[k]; ok {
		return
	}
	if len(g.order) == renderCached {
		delete(g.cache, g.order[0])
		g.order = g.order[1:]
	}
	g.cache[k] = b
	g.order = append(g.order, k)
}

func (h figureHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if name == "pin" {
		h.servePin(w, r)
		return
	}
	if name == "panels.zip" { // figurezip.go
		h.serveZip(w, r)
		return
	}
	kind, format, _ := strings.Cut(name, ".")
	known := slices.Contains(figureNames, kind) && slices.Contains(plotkit.Formats, format)
	if !known && !((kind == "latent" || kind == "faces") && format == "csv") {
		http.Error(w, fmt.Sprintf("unknown figure %q: want %s, as .svg, .png or .pdf (latent and faces also .csv)", name, strings.Join(figureNames, ", ")), http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	for k := range q {
		if !slices.Contains(figureParams, k) {
			http.Error(w, fmt.Sprintf("unknown parameter %q (want %s)", truncate(k, 40), strings.Join(figureParams, ", ")), http.StatusBadRequest)
			return
		}
	}
	if v := q.Get("shape"); q.Has("shape") && v != "slide" && v != "paper" {
		http.Error(w, fmt.Sprintf("shape %q: want slide (16:9, the default) or paper", truncate(v, 40)), http.StatusBadRequest)
		return
	}
	fs, ok := h.figureSession(w, r)
	if !ok {
		return
	}
	layer, ins, samples, live := liveFigure(fs)
	rk := renderKey{model: fs.Model, live: fmt.Sprint(layer, ins, samples, live), name: name, query: q.Encode()}
	body, cached := h.gate.get(rk)
	var err error
	if !cached {
		select {
		case h.gate.sem <- struct{}{}:
		case <-r.Context().Done():
			return
		case <-time.After(renderWait):
			http.Error(w, "the server is busy drawing other figures; try again in a moment", http.StatusServiceUnavailable)
			return
		}
		// Another request may have drawn the same figure while this one waited.
		if body, cached = h.gate.get(rk); cached {
			<-h.gate.sem
		} else if ok, wait := h.takeRate(r); !ok {
			<-h.gate.sem
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			http.Error(w, fmt.Sprintf("too many figure downloads from your address: try again in %d s (figures of an unchanged model are served from the cache at once)", secs), http.StatusTooManyRequests)
			return
		}
	}
	if !cached {
		h.gate.renders.Add(1)
		var buf bytes.Buffer
		switch kind {
		case "fit":
			err = h.fit(&buf, format, fs, q)
		case "layer":
			err = layerFigure(&buf, format, fs, q)
		case "bound":
			err = boundFigure(&buf, format, fs, q)
		case "depth":
			err = depthFigure(&buf, format, fs, q)
		case "samples":
			err = samplesFigure(&buf, format, fs, q) // samplesfigure.go
		case "latent":
			err = latentExport(&buf, format, fs, q)
		case "faces":
			err = facesExport(&buf, format, fs, q)
		default:
			err = h.messages(&buf, format, fs, q)
		}
		<-h.gate.sem
		if err == nil {
			body = buf.Bytes()
			h.gate.put(rk, body)
		}
	}
	if err != nil {
		var be badRequest
		if ok := asBadRequest(err, &be); ok {
			h.gate.rate.refund(r.RemoteAddr) // nothing was drawn
			http.Error(w, be.msg, http.StatusBadRequest)
			return
		}
		h.log.Error("web: figure", "err", err)
		http.Error(w, "could not draw the figure: "+stream.ForPeople(err.Error()), http.StatusInternalServerError)
		return
	}
	ct := map[string]string{"svg": "image/svg+xml", "png": "image/png", "pdf": "application/pdf", "csv": "text/csv; charset=utf-8"}[format]
	w.Header().Set("Content-Type", ct)
	w.Header().Set("X-Figure-Cache", map[bool]string{true: "hit", false: "miss"}[cached])
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fmt.Sprintf("dgpviz-%s-%s-iter%d.%s", kind, fs.Dataset, fs.Iter, format)))
	w.Write(body)
}

type badRequest struct{ msg string }

func (b badRequest) Error() string { return b.msg }

func asBadRequest(err error, out *badRequest) bool {
	b, ok := err.(badRequest)
	if ok {
		*out = b
	}
	return ok
}

func bad(format string, args ...any) error { return badRequest{fmt.Sprintf(format, args...)} }

// liveFigure returns the session's live message figure (0-based layer,
// inputs, samples), when its view shows one.
func liveFigure(fs *stream.FigureSession) (layer int, inputs []montecarlo.GaussianInput, samples int, ok bool) {
	if v, isRegression := fs.View.(*regression.View); isRegression {
		return v.FigureRequest()
	}
	return 0, nil, 0, false
}

func (h figureHandler) messages(buf *bytes.Buffer, format string, fs *stream.FigureSession, q url.Values) error {
	if q.Has("grid") {
		return bad("parameter \"grid\" does not apply to the message figure")
	}
	m := fs.Model
	units := q.Get("units")
	if units != "" && units != "model" && units != "original" {
		return bad("units %q: want original (default) or model", units)
	}
	layer, ins, samples, live := liveFigure(fs) // layer from 0, inputs in model units
	if !live {
		layer, samples = montecarlo.FirstFigureLayer(m), regression.FigureDefaultSamples
	}
	if v := q.Get("layer"); v != "" {
		l, err := strconv.Atoi(v)
		if err != nil {
			return bad("layer %q is not a whole number", truncate(v, 20))
		}
		if l < 1 || l > len(m.Layers) {
			return bad("layer %d out of range: the model has layers 1…%d", l, len(m.Layers))
		}
		if l-1 != layer {
			ins = nil
		}
		layer = l - 1
	}
	if _, qd, d := m.Layers[layer].Dims(); qd != 1 || d != 1 {
		return bad("layer %d has %d input and %d output dimensions; the message figure needs 1 and 1", layer+1, qd, d)
	}
	if v := q.Get("samples"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < figureMinSamples || n > figureMaxSamples {
			return bad("samples %q out of range %d…%d", truncate(v, 20), figureMinSamples, figureMaxSamples)
		}
		samples = n
	}
	if q.Has("inputs") && q.Has("preset") {
		return bad("give inputs or preset, not both")
	}
	if v := q.Get("inputs"); q.Has("inputs") {
		toModel := func(ins []montecarlo.GaussianInput) []montecarlo.GaussianInput {
			if units == "model" {
				return ins
			}
			return montecarlo.InputsToModel(ins, fs.NormX, layer)
		}
		parsed, err := parseInputs(v, toModel)
		if err != nil {
			return err
		}
		ins = parsed
	}
	preset := q.Get("preset")
	if q.Has("preset") && !slices.Contains(montecarlo.PresetNames(), preset) {
		return bad("unknown preset %q (want one of %s)", truncate(preset, 40), strings.Join(montecarlo.PresetNames(), ", "))
	}
	if ins == nil && preset == "" {
		preset = montecarlo.PresetPaper
	}
	if preset != "" {
		ps, err := montecarlo.Presets(m, layer)
		if err != nil {
			return bad("presets: %v", err)
		}
		ins = ps[preset]
	}
	fd, err := montecarlo.MessageFigure(m, layer, ins, samples, 1)
	if err != nil {
		return bad("%v", err)
	}
	if units != "model" {
		fd.ToOriginal(fs.NormX, fs.NormY, len(m.Layers))
	}
	if slideShape(q) {
		return slides.Messages(buf, format, fd, captionOf(fs, fmt.Sprintf("%d samples per input", samples)))
	}
	return montecarlo.RenderMessageFigure(buf, format, fd)
}

func (h figureHandler) fit(buf *bytes.Buffer, format string, fs *stream.FigureSession, q url.Values) error {
	for _, k := range []string{"layer", "inputs", "preset", "samples", "units", "grid"} {
		if q.Has(k) {
			return bad("parameter %q does not apply to the fit figure", k)
		}
	}
	fd, err := fitfigure.FitFigure(fs.Model, fs.NormX, fs.NormY, 0)
	if err != nil {
		return bad("%v", strings.TrimPrefix(err.Error(), "fitfigure: "))
	}
	if slideShape(q) {
		return slides.Fit(buf, format, fd, axisName(fs.Data.InputNames, fs.Data.InputUnit), axisName(fs.Data.OutputNames, fs.Data.OutputUnit), captionOf(fs, ""))
	}
	return fitfigure.RenderFit(buf, format, []*fitfigure.FitData{fd})
}

// parseInputs reads "mean:var,mean:var,…", converts them to model units
// with toModel and checks them against the message figure's limits.
func parseInputs(s string, toModel func([]montecarlo.GaussianInput) []montecarlo.GaussianInput) ([]montecarlo.GaussianInput, error) {
	ins, err := montecarlo.ParseGaussianInputs(s)
	if err != nil {
		return nil, bad("inputs: %v", err)
	}
	model := toModel(ins)
	if err := regression.CheckFigureInputs(model); err != nil {
		if model[0] != ins[0] { // the limits are the model's
			return nil, bad("inputs: %v (in the model's normalised units)", err)
		}
		return nil, bad("inputs: %v", err)
	}
	return model, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
