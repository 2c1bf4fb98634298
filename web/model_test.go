package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/stream"

	"github.com/gorilla/websocket"
)

// TestModelDownload checks that a live session's model downloads as a model
// file that the engine reads back to the same bound the page shows, with
// the session's normalisation.
func TestModelDownload(t *testing.T) {
	hs := newSite(t)
	key, c := liveSession(t, hs.URL, "play=0&speed=0")
	c.WriteJSON(map[string]any{"id": 5, "op": "step", "n": 20})
	var bound float64
	deadline := time.Now().Add(20 * time.Second)
	for bound == 0 {
		c.SetReadDeadline(deadline)
		mt, b, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if mt != websocket.BinaryMessage {
			continue
		}
		d, err := stream.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if d["type"] == "frame" && d["applied"] == 5.0 {
			bound = d["bound"].(float64)
		}
	}
	resp, err := http.Get(hs.URL + "/model.json?session=" + key)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Disposition"), "dgpviz-model-step-iter20.json") {
		t.Fatalf("status %d, disposition %q: %s", resp.StatusCode, resp.Header.Get("Content-Disposition"), body)
	}
	mf, err := engine.ReadModel(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	var ev engine.Evaluator
	res, _, err := ev.Evaluate(mf.Model, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bound != bound {
		t.Errorf("the downloaded model's bound %.17g, the page's %.17g", res.Bound, bound)
	}
	if len(mf.NormX.Mean) != 1 || mf.NormX.Mean[0] == 0 {
		t.Errorf("the download lacks the session's normalisation: %+v", mf.NormX)
	}
	for q, want := range map[string]int{"": 400, "?session=nope": 404} {
		r, err := http.Get(hs.URL + "/model.json" + q)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != want {
			t.Errorf("/model.json%s: status %d, want %d", q, r.StatusCode, want)
		}
	}
}
