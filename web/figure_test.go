package web

import (
	"bytes"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// liveSession opens a websocket session on the site and returns its
// figure_key, after the first frame (the model is published).
func liveSession(t *testing.T, base string, query string) (string, *websocket.Conn) {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var hello struct {
		Type      string `json:"type"`
		FigureKey string `json:"figure_key"`
	}
	// The hello comes once the session's model is made: seconds for the
	// robot data under -race on a busy machine.
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if err := c.ReadJSON(&hello); err != nil || hello.Type != "hello" || hello.FigureKey == "" {
		t.Fatalf("hello: %+v, %v", hello, err)
	}
	for { // wait for a frame: the model is published by then
		mt, b, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if mt == websocket.BinaryMessage && bytes.Contains(b[:min(len(b), 200)], []byte(`"type":"frame"`)) {
			break
		}
	}
	return hello.FigureKey, c
}

func TestFigureDownloads(t *testing.T) {
	hs := newSite(t)
	key, _ := liveSession(t, hs.URL, "play=0&speed=0")
	magic := map[string][]byte{"svg": []byte("<?xml"), "png": []byte("\x89PNG\r\n\x1a\n"), "pdf": []byte("%PDF-")}
	types := map[string]string{"svg": "image/svg+xml", "png": "image/png", "pdf": "application/pdf"}
	for _, f := range []string{"svg", "png", "pdf"} {
		for _, q := range []string{
			"messages." + f + "?session=" + key,
			"messages." + f + "?session=" + key + "&layer=2&inputs=-0.5:0.01,0:0.04,1.5:0.01,0:0.3&samples=2000",
			"messages." + f + "?session=" + key + "&layer=1&preset=" + url.QueryEscape("across a bend") + "&units=model&samples=1000",
			"fit." + f + "?session=" + key,
		} {
			if testing.Short() && f != "svg" && !strings.HasPrefix(q, "fit.") && strings.Contains(q, "&") {
				continue // -short: every query as SVG, each format once per figure
			}
			r, body := get(t, hs.URL+"/figure/"+q)
			if r.StatusCode != 200 {
				t.Errorf("%s: status %d: %s", q, r.StatusCode, body)
				continue
			}
			if r.Header.Get("Content-Type") != types[f] || !bytes.HasPrefix([]byte(body), magic[f]) {
				t.Errorf("%s: type %q, starts %q", q, r.Header.Get("Content-Type"), body[:min(len(body), 10)])
			}
			if !strings.Contains(r.Header.Get("Content-Disposition"), "attachment") {
				t.Errorf("%s: no attachment disposition", q)
			}
			if f == "svg" && !strings.Contains(body, "</svg>") {
				t.Errorf("%s: incomplete SVG", q)
			}
		}
	}
}

func TestFigureBadRequests(t *testing.T) {
	hs := newSite(t)
	key, _ := liveSession(t, hs.URL, "play=0&speed=0")
	cases := []struct {
		q      string
		status int
		want   string
	}{
		{"messages.svg", 400, "missing parameter session"},
		{"messages.svg?session=nope", 404, "no such session"},
		{"messages.svg?session=" + strings.Repeat("0", 32), 404, "no such session"},
		{"messages.gif?session=" + key, 404, "unknown figure"},
		{"nothing.svg?session=" + key, 404, "unknown figure"},
		{"messages.svg?session=" + key + "&layer=x", 400, "layer \"x\" is not a whole number"},
		{"messages.svg?session=" + key + "&layer=9", 400, "layer 9 out of range: the model has layers 1…3"},
		{"messages.svg?session=" + key + "&layer=0", 400, "layer 0 out of range: the model has layers 1…3"},
		{"messages.svg?session=" + key + "&layer=-1", 400, "out of range"},
		{"messages.svg?session=" + key + "&samples=5", 400, "samples \"5\" out of range"},
		{"messages.svg?session=" + key + "&samples=lots", 400, "samples"},
		{"messages.svg?session=" + key + "&inputs=", 400, "inputs"},
		// One parser (montecarlo.ParseGaussianInputs) counts inputs from 1.
		{"messages.svg?session=" + key + "&inputs=1", 400, "input 1 \"1\": want mean:variance"},
		{"messages.svg?session=" + key + "&inputs=0:1,0:-1", 400, "input 2: variance -1"},
		{"messages.svg?session=" + key + "&inputs=NaN:1", 400, "input 1: mean NaN"},
		{"messages.svg?session=" + key + "&inputs=0:Inf", 400, "input 1: variance +Inf"},
		{"messages.svg?session=" + key + "&inputs=0:1e9", 400, "input 1 has variance"},
		{"messages.svg?session=" + key + "&inputs=" + strings.Repeat("0:1,", 8) + "0:1", 400, "want 1…8"},
		{"messages.svg?session=" + key + "&preset=magic", 400, "unknown preset"},
		{"messages.svg?session=" + key + "&preset=" + url.QueryEscape("across a bend") + "&inputs=0:1", 400, "not both"},
		{"messages.svg?session=" + key + "&units=furlongs", 400, "units"},
		{"messages.svg?session=" + key + "&colour=red", 400, "unknown parameter \"colour\""},
		{"fit.svg?session=" + key + "&layer=0", 400, "does not apply"},
	}
	// Answers are for people: no package prefixes, no Go type names, no
	// ranges counted from 0.
	devWords := regexp.MustCompile(`(^|: )(stream|engine|montecarlo|dataset|latent|faces|fitfigure|plotkit|web|wire): |\b(u?int\d*|float\d+)\b|invalid character|\b(layers|range) 0…`)
	for _, tc := range cases {
		r, body := get(t, hs.URL+"/figure/"+tc.q)
		if r.StatusCode != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s: status %d %q, want %d containing %q", tc.q, r.StatusCode, body, tc.status, tc.want)
		}
		if m := devWords.FindString(body); m != "" {
			t.Errorf("%s: %q has %q, which is not for people", tc.q, body, m)
		}
	}
}

// TestFigureSessionEnds: once the websocket closes, its figures are gone.
func TestFigureSessionEnds(t *testing.T) {
	hs := newSite(t)
	key, c := liveSession(t, hs.URL, "play=0&speed=0")
	if r, _ := get(t, hs.URL+"/figure/fit.png?session="+key); r.StatusCode != 200 {
		t.Fatalf("status %d", r.StatusCode)
	}
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, _ := get(t, hs.URL+"/figure/fit.png?session="+key)
		if r.StatusCode == 404 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %d after the session closed", r.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLatentExport: the latent coordinates as CSV for any session, and the
// latent-space figure for a model with a multi-dimensional hidden layer.
func TestLatentExport(t *testing.T) {
	hs := newSite(t)
	key, _ := liveSession(t, hs.URL, "play=0&speed=0")
	r, body := get(t, hs.URL+"/figure/latent.csv?session="+key)
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("csv: status %d, type %q: %s", r.StatusCode, r.Header.Get("Content-Type"), body)
	}
	lines := strings.Split(strings.TrimSpace(body), "\n")
	// The step data: 30 rows; 3 layers of 1 output each: x, then mean and
	// var per layer, each with its unit (the step data name none: the
	// data's own; hidden layers are latent).
	if len(lines) != 31 || lines[0] != "x [original units],split,layer1_dim1_mean [latent],layer1_dim1_var [latent],layer2_dim1_mean [latent],layer2_dim1_var [latent],y_mean [original units],y_var [(original units)²]" {
		t.Errorf("csv: %d lines, header %q", len(lines), lines[0])
	}
	if r, body := get(t, hs.URL+"/figure/latent.svg?session="+key); r.StatusCode != 400 || !strings.Contains(body, "2 or more dimensions") {
		t.Errorf("1-D hidden layers: status %d %q, want 400", r.StatusCode, body)
	}
	key2, _ := liveSession(t, hs.URL, "play=0&speed=0&hidden=2")
	r, body = get(t, hs.URL+"/figure/latent.png?session="+key2)
	if r.StatusCode != 200 || !strings.HasPrefix(body, "\x89PNG") {
		t.Errorf("png: status %d: %.80q", r.StatusCode, body)
	}
	if r, body := get(t, hs.URL+"/figure/latent.csv?session="+key+"&layer=1"); r.StatusCode != 400 {
		t.Errorf("latent with layer: status %d %q, want 400", r.StatusCode, body)
	}
}
