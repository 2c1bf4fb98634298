package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot/font/liberation"

	"dgpviz/internal/plotkit/plotkittest"
)

// pinOf pins session key's model and returns the pin and its iteration.
func pinOf(t *testing.T, base, key string) (string, int) {
	t.Helper()
	r, body := get(t, base+"/figure/pin?session="+key)
	if r.StatusCode != 200 {
		t.Fatalf("pin: %d %s", r.StatusCode, body)
	}
	var p struct {
		Pin  string `json:"pin"`
		Iter int    `json:"iter"`
	}
	if err := json.Unmarshal([]byte(body), &p); err != nil || p.Pin == "" {
		t.Fatalf("pin: %q, %v", body, err)
	}
	return p.Pin, p.Iter
}

// sendStep runs n optimizer iterations in the session and waits for the
// frame after them.
func sendStep(t *testing.T, c *websocket.Conn, id, n int) {
	t.Helper()
	if err := c.WriteJSON(map[string]any{"id": id, "op": "step", "n": n}); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	want := []byte(fmt.Sprintf(`"applied":%d,`, id))
	for {
		mt, b, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if mt == websocket.BinaryMessage && bytes.Contains(b[:min(len(b), 300)], []byte(`"type":"frame"`)) && bytes.Contains(b[:min(len(b), 300)], want) {
			return
		}
	}
}

// TestSlideDownloads: every panel of the regression page downloads as a
// 16:9 slide (a PNG of 1600 × 900 pixels) in SVG, PNG and PDF with its
// caption line naming the iteration; every string a slide draws prints in
// its PDF and has its glyphs (checkPrinted); a menu's pin gives all three formats
// from one snapshot even while the model moves on; the depth comparison
// is refused until it has run; a pin serves its own session only and
// expires with a 410 saying what to do.
func TestSlideDownloads(t *testing.T) {
	hs := newSite(t)
	key, c := liveSession(t, hs.URL, "play=0&speed=0")
	sendStep(t, c, 1, 20)
	pin, iter := pinOf(t, hs.URL, key)
	if iter != 20 {
		t.Fatalf("pinned at iteration %d, want 20", iter)
	}
	sendStep(t, c, 2, 15) // the model moves on: the pin does not
	magic := map[string][]byte{"svg": []byte("<?xml"), "png": []byte("\x89PNG\r\n\x1a\n"), "pdf": []byte("%PDF-")}
	for _, fig := range []string{"fit", "layer", "bound", "messages"} {
		q := "&pin=" + pin
		if fig == "layer" {
			q += "&layer=2"
		}
		bodies := map[string]string{}
		for _, f := range []string{"svg", "png", "pdf"} {
			r, body := get(t, fmt.Sprintf("%s/figure/%s.%s?session=%s%s", hs.URL, fig, f, key, q))
			if r.StatusCode != 200 || !bytes.HasPrefix([]byte(body), magic[f]) {
				t.Errorf("%s.%s: %d %.200s", fig, f, r.StatusCode, body)
				continue
			}
			bodies[f] = body
			if cd := r.Header.Get("Content-Disposition"); !strings.Contains(cd, "iter20.") {
				t.Errorf("%s.%s from the pin: %q, want iteration 20", fig, f, cd)
			}
			switch f {
			case "png":
				cfg, err := png.DecodeConfig(strings.NewReader(body))
				if err != nil || cfg.Width != 1600 || cfg.Height != 900 {
					t.Errorf("%s.png: %v, %d × %d, want 1600 × 900 (16:9)", fig, err, cfg.Width, cfg.Height)
				}
			case "svg":
				if !regexp.MustCompile(`iteration 20\b`).MatchString(body) {
					t.Errorf("%s.svg has no caption with iteration 20", fig)
				}
				if fig != "messages" && !strings.Contains(body, "±") && !strings.Contains(body, "bound") {
					t.Errorf("%s.svg: no legend", fig)
				}
			}
		}
		checkPrinted(t, fig, bodies["svg"], bodies["pdf"])
	}
	// Without the pin: the latest model.
	if r, _ := get(t, hs.URL+"/figure/fit.svg?session="+key); !strings.Contains(r.Header.Get("Content-Disposition"), "iter35.") {
		t.Errorf("the live fit: %q, want iteration 35", r.Header.Get("Content-Disposition"))
	}
	for _, tc := range []struct{ q, want string }{
		{"depth.svg?session=" + key, "has not been run"},
		{"layer.svg?session=" + key + "&layer=7", "out of range"},
		{"layer.svg?session=" + key + "&layer=x", "is not a whole number"},
		{"layer.svg?session=" + key + "&layer=0", "out of range: the model has layers 1…3"}, // counted from 1, as on the page
		{"bound.svg?session=" + key + "&shape=paper", "slide only"},
		{"fit.svg?session=" + key + "&shape=round", "want slide"},
		{"bound.svg?session=" + key + "&grid=3", "does not apply"},
	} {
		if r, body := get(t, hs.URL+"/figure/"+tc.q); r.StatusCode != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %q, want 400 with %q", tc.q, r.StatusCode, body, tc.want)
		}
	}
	other, _ := liveSession(t, hs.URL, "play=0&speed=0")
	if r, body := get(t, hs.URL+"/figure/fit.svg?session="+other+"&pin="+pin); r.StatusCode != 410 || !strings.Contains(body, "open the download menu again") {
		t.Errorf("another session's pin: %d %q, want 410", r.StatusCode, body)
	}
	// The paper's shape is still there for the fit.
	if r, body := get(t, hs.URL+"/figure/fit.png?session="+key+"&shape=paper"); r.StatusCode != 200 {
		t.Errorf("fit.png?shape=paper: %d %q", r.StatusCode, body)
	} else if cfg, _ := png.DecodeConfig(strings.NewReader(body)); cfg.Width*9 == cfg.Height*16 {
		t.Errorf("the paper's fit figure is 16:9 too (%d × %d)", cfg.Width, cfg.Height)
	}

	// The latent views of a model with a 2-D hidden layer.
	key2, _ := liveSession(t, hs.URL, "play=0&speed=0&hidden=2")
	if r, body := get(t, hs.URL+"/figure/latent.png?session="+key2); r.StatusCode != 200 {
		t.Errorf("latent.png: %d %.200s", r.StatusCode, body)
	} else if cfg, err := png.DecodeConfig(strings.NewReader(body)); err != nil || cfg.Width != 1600 || cfg.Height != 900 {
		t.Errorf("latent.png: %v, %d × %d, want 1600 × 900", err, cfg.Width, cfg.Height)
	}
	checkPrintedDownload(t, hs.URL, "latent", "?session="+key2)

	// The depth comparison, once it has run.
	if err := c.WriteJSON(map[string]any{"id": 3, "op": "compare", "n": 60}); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(120 * time.Second))
	for {
		mt, b, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		h := b[:min(len(b), 400)]
		if mt == websocket.BinaryMessage && bytes.Contains(h, []byte(`"type":"compare"`)) && bytes.Contains(h, []byte(`"done":true`)) {
			break
		}
	}
	deadline := time.Now().Add(10 * time.Second) // the writer hands it to the hub as it sends it
	for {
		r, body := get(t, hs.URL+"/figure/depth.png?session="+key)
		if r.StatusCode == 200 {
			if cfg, err := png.DecodeConfig(strings.NewReader(body)); err != nil || cfg.Width != 1600 || cfg.Height != 900 {
				t.Errorf("depth.png: %v, %d × %d", err, cfg.Width, cfg.Height)
			}
			checkPrintedDownload(t, hs.URL, "depth", "?session="+key)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("depth.png after the comparison: %d %q", r.StatusCode, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkPrintedDownload downloads figure fig's SVG and PDF with query q
// and checks that the PDF prints the SVG's text (checkPrinted).
func checkPrintedDownload(t *testing.T, base, fig, q string) {
	t.Helper()
	bodies := map[string]string{}
	for _, f := range []string{"svg", "pdf"} {
		r, body := get(t, base+"/figure/"+fig+"."+f+q)
		if r.StatusCode != 200 {
			t.Errorf("%s.%s: %d %.200s", fig, f, r.StatusCode, body)
			return
		}
		bodies[f] = body
	}
	checkPrinted(t, fig, bodies["svg"], bodies["pdf"])
}

// svgText matches the text an SVG figure draws, one FillString each.
var svgText = regexp.MustCompile(`<text [^>]*>([^<]*)</text>`)

// checkPrinted checks that every string a figure draws (read from its SVG)
// prints in its PDF of the same snapshot as drawn — pdftotext reads it
// back — and has a glyph in the fonts its PNG is drawn with.
func checkPrinted(t *testing.T, fig, svg, pdf string) {
	t.Helper()
	texts := svgText.FindAllStringSubmatch(svg, -1)
	if len(texts) == 0 {
		t.Errorf("%s.svg draws no text", fig)
		return
	}
	printed := strings.Join(strings.Fields(plotkittest.PDFText(t, []byte(pdf))), " ")
	var buf sfnt.Buffer
	for _, m := range texts {
		s := strings.Join(strings.Fields(html.UnescapeString(m[1])), " ")
		if !strings.Contains(printed, s) {
			t.Errorf("%s.pdf does not print %q; its text: %q", fig, s, printed)
		}
		for _, r := range s {
			for _, f := range liberation.Collection() {
				if i, err := f.Face.GlyphIndex(&buf, r); err != nil || i == 0 {
					t.Errorf("%s: %q has no glyph in %s", fig, r, f.Font.Typeface)
				}
			}
		}
	}
}
