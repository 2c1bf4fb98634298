package web

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/admit"
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
	srv, err := stream.NewServer(stream.Options{Limits: admit.DefaultLimits(), Defaults: admit.DefaultConfig(), Logger: log, ParkBurst: 1 << 20})
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

// TestPageWithBadURLShowsNotice: a link's bad parameters are named (in
// people's words: layers counted from 1, no package prefixes) and left
// out, and the rest of the link still applies.
func TestPageWithBadURLShowsNotice(t *testing.T) {
	hs := newSite(t)
	_, body := get(t, hs.URL+"/?hidden=1,999&m=9&seed=x&opt=adam&speed=200")
	notice := body[strings.Index(body, `data-testid="notice"`)+1:]
	notice = notice[:strings.Index(notice, "</p>")]
	for _, want := range []string{"hidden layer 2: width 999 out of range 1…8", `seed: &#34;x&#34; is not a non-negative integer`, "the others apply"} {
		if !strings.Contains(notice, want) {
			t.Errorf("notice %q lacks %q", notice, want)
		}
	}
	if strings.Contains(notice, "stream: ") || strings.Contains(notice, "hidden[") {
		t.Errorf("notice %q has a package prefix or an index from 0", notice)
	}
	for _, want := range []string{
		`value="1,1"`, // the default widths, for the bad ones
		`data-testid="inducing" type="number" min="1" max="64" step="1" value="9"`,
		`<option value="adam" selected>`,
		`<option value="200" selected>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s: the link's good settings should still apply", want)
		}
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
