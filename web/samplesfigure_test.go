package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSamplesFigure: the samples view downloads as the paper's step
// figure — a slide in every format whose key counts the inputs with two
// or more modes over x in [−1, 2] — and bad parameters are refused.
func TestSamplesFigure(t *testing.T) {
	hs := newSite(t)
	key, c := liveSession(t, hs.URL, "play=0&speed=0")
	sendStep(t, c, 1, 100)
	magic := map[string]string{"svg": "<?xml", "png": "\x89PNG", "pdf": "%PDF-"}
	for _, f := range []string{"svg", "png", "pdf"} {
		r, body := get(t, hs.URL+"/figure/samples."+f+"?session="+key+"&samples=200")
		if r.StatusCode != 200 || !strings.HasPrefix(body, magic[f]) {
			t.Fatalf("samples.%s: %d %.100q", f, r.StatusCode, body)
		}
		if f == "svg" && !strings.Contains(body, "inputs with two or more modes") {
			t.Error("the SVG's key does not count the bimodal inputs")
		}
		if f == "png" {
			path := filepath.Join(artifactDir(t), "samples-figure.png")
			os.WriteFile(path, []byte(body), 0o644)
			t.Logf("figure: %s", path)
		}
	}
	for q, want := range map[string]string{
		"&samples=5":    "samples \"5\" out of range",
		"&layer=1":      "does not apply",
		"&shape=paper":  "slide only",
		"&samples=lots": "out of range",
	} {
		if r, body := get(t, hs.URL+"/figure/samples.svg?session="+key+q); r.StatusCode != 400 || !strings.Contains(body, want) {
			t.Errorf("%s: %d %q, want 400 with %q", q, r.StatusCode, body, want)
		}
	}
}
