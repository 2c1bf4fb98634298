// Package web serves dgpviz's page: templ components for the HTML, the
// embedded static ES modules and CSS, and the websocket endpoint.
package web

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/static"
)

// Backend is what the page handler needs from the session server.
type Backend interface {
	Defaults() admit.Config
	Limits() admit.Limits
	Catalog() *dataset.Catalog
}

// Option configures New.
type Option func(*options)

type options struct {
	figureBurst int
	figureEvery time.Duration
}

// WithFigureRate sets how many figures one client address may have drawn
// at once (burst) and how often one more after that (every); downloads
// served from the figure cache are free. The default is 6 and one every
// 3 s.
func WithFigureRate(burst int, every time.Duration) Option {
	return func(o *options) { o.figureBurst, o.figureEvery = burst, every }
}

// New returns the site's handler: "/" the page, "/static/" the assets,
// "/ws" the websocket (ws), "/healthz" a liveness check.
func New(b Backend, ws http.Handler, log *slog.Logger, opts ...Option) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	o := options{figureBurst: figureBurst, figureEvery: figureEvery}
	for _, f := range opts {
		f(&o)
	}
	mux := http.NewServeMux()
	lessons, err := LoadLessons(static.FS) // lesson.go; the tests check every embedded lesson
	if err != nil {
		log.Error("web: a lesson is not usable", "err", err)
	}
	mux.Handle("GET /{$}", pageHandler{b, log, lessons})
	mux.Handle("GET /static/", http.StripPrefix("/static/", assets(http.FileServerFS(static.FS))))
	mux.Handle("GET /ws", ws)
	if fb, ok := b.(FigureBackend); ok { // figure downloads (figure.go)
		mux.Handle("GET /figure/{file}", figureHandler{fb, log, newRenderGate(newClientRate(o.figureBurst, o.figureEvery)), newPinStore()})
		mux.Handle("GET /model.json", modelHandler{fb, log}) // model.go
	}
	if u, ok := b.(Uploader); ok {
		mux.Handle("POST /model", modelUpload{u, log}) // upload.go
		mux.Handle("POST /data", dataUpload{u, log})
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	return secureHeaders(logRequests(mux, log))
}

// assets serves the embedded files with revalidation (no stale modules
// after an upgrade) and without directory listings.
func assets(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") { // no directory listings
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

type pageHandler struct {
	b       Backend
	log     *slog.Logger
	lessons []LessonInfo
}

func (h pageHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := PageData{Datasets: h.b.Catalog().Info(), Limits: h.b.Limits(), Groups: engine.GroupNames(), CSVConventions: dataset.CSVConventions}
	cfg, problems := linkConfig(r.URL.Query(), h.b.Defaults(), h.b.Limits(), h.b.Catalog())
	if len(problems) > 0 {
		p.Notice = "Some of the link's settings were not usable and were left out (" + strings.Join(problems, "; ") + "); the others apply."
	}
	p.Config = cfg
	js, _ := json.Marshal(cfg)
	p.ConfigJSON = string(js)
	p.Lessons = h.lessons
	ls, _ := json.Marshal(h.lessons)
	p.LessonsJSON = string(ls)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
	if err := Page(p).Render(r.Context(), w); err != nil {
		h.log.Error("web: rendering page", "err", err)
	}
}

// linkParams are the page URL's configuration parameters (admit.Config's
// URL form), in the order they apply: the data set first, as the others'
// limits depend on it.
var linkParams = []string{"data", "hidden", "m", "opt", "lr", "seed", "frozen", "play", "speed"}

// linkConfig reads the page URL's configuration parameter by parameter,
// starting from def: a parameter that does not parse or breaks a limit
// is left out and described in problems, and the others still apply.
// Other parameters (the page's view: present, scale, follow…) are not its
// business.
func linkConfig(q url.Values, def admit.Config, l admit.Limits, cat *dataset.Catalog) (cfg admit.Config, problems []string) {
	cfg = def
	for _, k := range linkParams {
		if !q.Has(k) {
			continue
		}
		next, err := admit.ParseQuery(url.Values{k: q[k]}, cfg)
		if err == nil {
			err = next.Validate(l, cat)
		}
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		cfg = next
	}
	return admit.LinkPreset(cfg, q, def, l, cat), problems
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

// Unwrap lets http.ResponseController and the websocket upgrader reach the
// underlying writer (for Hijack).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func logRequests(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ws" { // the upgrader needs the Hijacker; sessions log themselves
			h.ServeHTTP(w, r)
			return
		}
		t := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: 200}
		h.ServeHTTP(sw, r)
		log.Debug("http", "method", r.Method, "path", r.URL.Path, "status", sw.status, "dur", time.Since(t))
	})
}
