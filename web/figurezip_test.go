package web

import (
	"archive/zip"
	"bytes"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFiguresZip: one download holds every panel's figure in three
// formats from one snapshot, named by panel and layer, and counts once
// against the address's figure rate, where 21 single downloads went over
// it after 6; a bad part is named.
func TestFiguresZip(t *testing.T) {
	hs := newSite(t, WithFigureRate(2, time.Hour))
	key, c := liveSession(t, hs.URL, "play=0&speed=0")
	sendStep(t, c, 1, 20) // a bound chart needs points
	pin, iter := pinOf(t, hs.URL, key)
	// Every panel as SVG, and each format once (a PNG and a PDF: the
	// race detector makes drawing slow).
	parts := []string{"fit.svg", "bound.svg", "layer.svg?layer=1", "layer.svg?layer=2", "layer.svg?layer=3", "messages.svg?layer=2&samples=1000", "layer.png?layer=2", "bound.pdf"}
	q := url.Values{"session": {key}, "pin": {pin}, "part": parts}
	r, body := get(t, hs.URL+"/figure/panels.zip?"+q.Encode())
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("status %d, type %q: %.200s", r.StatusCode, r.Header.Get("Content-Type"), body)
	}
	zr, err := zip.NewReader(bytes.NewReader([]byte(body)), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	magic := map[string]string{"svg": "<?xml", "png": "\x89PNG", "pdf": "%PDF-"}
	for _, f := range zr.File {
		names = append(names, f.Name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(rc)
		rc.Close()
		if ext := f.Name[strings.LastIndex(f.Name, ".")+1:]; !strings.HasPrefix(b.String(), magic[ext]) {
			t.Errorf("%s starts %q", f.Name, b.String()[:min(b.Len(), 8)])
		}
	}
	t.Logf("%d files: %v", len(names), names)
	if len(names) != len(parts) {
		t.Errorf("%d files for %d figures", len(names), len(parts))
	}
	for _, want := range []string{"dgpviz-layer2-step-iter", "dgpviz-bound-step-iter", "dgpviz-messages-layer2-step-iter"} {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, want) && strings.Contains(n, "iter"+itoa(iter)+".") }) {
			t.Errorf("no %s…%d file in %v", want, iter, names)
		}
	}
	// One zip, one download: a second fits in the rate of 2, a third not.
	if r, body := get(t, hs.URL+"/figure/panels.zip?"+q.Encode()); r.StatusCode != 200 {
		t.Errorf("a second zip: %d %s", r.StatusCode, body)
	}
	if r, _ := get(t, hs.URL+"/figure/panels.zip?"+q.Encode()); r.StatusCode != 429 {
		t.Errorf("a third zip within the rate of 2: status %d, want 429", r.StatusCode)
	}
	for _, tc := range []struct {
		q, want string
	}{
		{url.Values{"session": {key}, "part": {"fit.svg"}}.Encode(), "give its pin"},
		{url.Values{"session": {key}, "pin": {pin}}.Encode(), "0 figures asked for"},
		{url.Values{"session": {key}, "pin": {pin}, "part": {"panels.zip"}}.Encode(), "figure 1"},
		{url.Values{"session": {key}, "pin": {pin}, "part": {"fit.svg?session=x"}}.Encode(), "figure 1"},
		{url.Values{"session": {key}, "pin": {pin}, "colour": {"red"}}.Encode(), "unknown parameter"},
	} {
		if r, body := get(t, hs.URL+"/figure/panels.zip?"+tc.q); r.StatusCode != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %q, want 400 with %q", tc.q, r.StatusCode, body, tc.want)
		}
	}
	hs2 := newSite(t)
	key2, _ := liveSession(t, hs2.URL, "play=0&speed=0")
	pin2, _ := pinOf(t, hs2.URL, key2)
	q2 := url.Values{"session": {key2}, "pin": {pin2}, "part": {"fit.svg", "layer.svg?layer=9"}}
	if r, body := get(t, hs2.URL+"/figure/panels.zip?"+q2.Encode()); r.StatusCode != 400 || !strings.Contains(body, "figure 2, layer.svg: layer 9 out of range") {
		t.Errorf("a bad part: %d %q", r.StatusCode, body)
	}
}
