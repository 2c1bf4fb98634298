package web

import (
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"dgpviz/internal/allviews"
	"dgpviz/internal/engine"
	"dgpviz/internal/plotkit"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"
)

// FigureBackend finds a live session's model for figure downloads;
// *stream.Server implements it. New mounts /figure/ when the Backend does.
type FigureBackend interface {
	FigureSession(key string) (*view.Download, bool)
}

// figureHandler serves
//
//	GET /figure/NAME.{svg,png,pdf}?session=KEY[&pin=P][&shape=paper][…]
//
// for the session whose hello carried figure_key KEY, from its latest
// published model (a private copy, so no race with the optimizer) or the
// snapshot a download menu pinned (pin.go): the figure NAME of the
// session's view (view.Figure; the view reads the figure's own
// parameters), 16:9 slides unless shape=paper. Bad parameters get 400
// with the reason, an unknown or ended session 404.
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
	known := slices.ContainsFunc(figures, func(f view.Figure) bool {
		return f.Name == kind && (slices.Contains(plotkit.Formats, format) || f.CSV && format == "csv")
	})
	if !known {
		http.Error(w, fmt.Sprintf("unknown figure %q: want %s, as .svg, .png or .pdf (%s also .csv)", name, strings.Join(figureNames(false), ", "), strings.Join(figureNames(true), " and ")), http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	for k := range q {
		if !slices.Contains(figureParams, k) {
			http.Error(w, fmt.Sprintf("unknown parameter %q (want %s)", wire.Truncate(k, 40), strings.Join(figureParams, ", ")), http.StatusBadRequest)
			return
		}
	}
	if v := q.Get("shape"); q.Has("shape") && v != "slide" && v != "paper" {
		http.Error(w, fmt.Sprintf("shape %q: want slide (16:9, the default) or paper", wire.Truncate(v, 40)), http.StatusBadRequest)
		return
	}
	fs, ok := h.figureSession(w, r)
	if !ok {
		return
	}
	fig, ok := view.FindFigure(fs.View, kind)
	if !ok {
		http.Error(w, fmt.Sprintf("the %s figure is not drawn here: this session's data are shown in the %s view", kind, fs.View.Kind()), http.StatusBadRequest)
		return
	}
	rk := renderKey{model: fs.Model, name: name, query: q.Encode()}
	if st, ok := fs.View.(view.FigureStater); ok {
		rk.live = st.FigureState()
	}
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
		err = fig.Draw(&buf, format, fs, q)
		<-h.gate.sem
		if err == nil {
			body = buf.Bytes()
			h.gate.put(rk, body)
		}
	}
	if err != nil {
		if be, ok := view.IsBadRequest(err); ok {
			h.gate.rate.refund(r.RemoteAddr) // nothing was drawn
			http.Error(w, be.Msg, http.StatusBadRequest)
			return
		}
		h.log.Error("web: figure", "err", err)
		http.Error(w, "could not draw the figure: "+err.Error(), http.StatusInternalServerError)
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

// figureParams are the parameters of /figure/'s figures.
var figureParams = []string{"session", "pin", "shape", "layer", "inputs", "preset", "samples", "units", "grid"}

// figures are every view's figures, each name once (allviews.Figures).
var figures = allviews.Figures()

// figureNames lists the figures' names; csv: those that are also tables.
func figureNames(csv bool) []string {
	var out []string
	for _, f := range figures {
		if !csv || f.CSV {
			out = append(out, f.Name)
		}
	}
	return out
}
