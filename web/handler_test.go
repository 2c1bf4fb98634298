package web

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/stream"
)

func newSite(t *testing.T, opts ...Option) *httptest.Server {
	t.Helper()
	if len(opts) == 0 {
		// Tests download many different figures from one address: no
		// per-client rate unless a test asks for one.
		opts = []Option{WithFigureRate(1<<20, time.Millisecond)}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Tests upload many files from one address: no parked-state rate.
	srv, err := stream.NewServer(stream.Options{Limits: stream.DefaultLimits(), Defaults: stream.DefaultConfig(), Logger: log, ParkBurst: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(New(srv, srv, log, opts...))
	t.Cleanup(hs.Close)
	return hs
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	return r, string(b)
}

func TestPageRendersConfigFromURL(t *testing.T) {
	hs := newSite(t)
	r, body := get(t, hs.URL+"/?hidden=2,1&m=9&opt=adam&seed=4&frozen=noise&speed=200")
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("status %d, type %q", r.StatusCode, r.Header.Get("Content-Type"))
	}
	if !strings.Contains(r.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Errorf("no CSP header")
	}
	for _, want := range []string{
		`data-testid="hidden" type="text" inputmode="numeric" pattern="[0-9, ]*" size="6" value="2,1"`,
		`data-testid="inducing" type="number" min="1" max="64" step="1" value="9"`,
		`<option value="adam" selected>`,
		`data-testid="seed" type="number" min="0" step="1" value="4"`,
		`data-testid="freeze-noise" data-group="noise" checked`,
		`<option value="200" selected>`,
		`data-testid="bound-value"`, `data-testid="iteration"`, `data-testid="play"`, `data-testid="step"`, `data-testid="reset"`,
		`data-testid="connection-banner"`, `<template id="tpl-layer">`, `<details class="explain">`,
		`<script type="module" src="/static/app.js">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(body, `data-testid="notice"`) {
		t.Errorf("valid URL produced a notice")
	}
}

func TestPageWithBadURLShowsNotice(t *testing.T) {
	hs := newSite(t)
	_, body := get(t, hs.URL+"/?hidden=1,999&m=12")
	if !strings.Contains(body, `data-testid="notice"`) || !strings.Contains(body, "hidden[1]: width 999") {
		t.Errorf("no notice naming the bad width")
	}
	if !strings.Contains(body, `value="1,1"`) {
		t.Errorf("bad URL did not fall back to the default widths")
	}
}

func TestStaticAssets(t *testing.T) {
	hs := newSite(t)
	for path, typ := range map[string]string{
		"/static/app.js":             "javascript",
		"/static/protocol.js":        "javascript",
		"/static/plot.js":            "javascript",
		"/static/panels/registry.js": "javascript",
		"/static/panels/fit.js":      "javascript",
		"/static/panels/layer.js":    "javascript",
		"/static/panels/layernd.js":  "javascript",
		"/static/panels/bound.js":    "javascript",
		"/static/style.css":          "text/css",
	} {
		r, body := get(t, hs.URL+path)
		if r.StatusCode != 200 || !strings.Contains(r.Header.Get("Content-Type"), typ) || len(body) < 100 {
			t.Errorf("%s: status %d, type %q, %d bytes", path, r.StatusCode, r.Header.Get("Content-Type"), len(body))
		}
	}
	if r, _ := get(t, hs.URL+"/static/nope.js"); r.StatusCode != 404 {
		t.Errorf("missing asset: status %d", r.StatusCode)
	}
	if r, _ := get(t, hs.URL+"/static/panels/"); r.StatusCode != 404 {
		t.Errorf("directory listing: status %d", r.StatusCode)
	}
	if r, _ := get(t, hs.URL+"/nope"); r.StatusCode != 404 {
		t.Errorf("unknown path: status %d", r.StatusCode)
	}
	if r, body := get(t, hs.URL+"/healthz"); r.StatusCode != 200 || body != "ok\n" {
		t.Errorf("healthz: %d %q", r.StatusCode, body)
	}
	// /ws without an upgrade is refused by the websocket upgrader.
	if r, _ := get(t, hs.URL+"/ws"); r.StatusCode != http.StatusBadRequest {
		t.Errorf("plain GET /ws: status %d, want 400", r.StatusCode)
	}
}
