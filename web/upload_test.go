package web

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/stream"

	"github.com/gorilla/websocket"
)

// TestModelUpload: a model saved from a live session (GET /model.json)
// and sent back (POST /model) gives a token that resumes a session
// starting from exactly that model: the same bound to the last digit, its
// own data set; bad files get 400 with a reason, too large ones 413.
func TestModelUpload(t *testing.T) {
	hs := newSite(t)
	key, c := liveSession(t, hs.URL, "play=0&speed=0")
	c.WriteJSON(map[string]any{"id": 5, "op": "step", "n": 25})
	bound := waitApplied(t, c, 5)
	r, saved := get(t, hs.URL+"/model.json?session="+key)
	if r.StatusCode != 200 {
		t.Fatalf("save: %d %s", r.StatusCode, saved)
	}
	resp, err := http.Post(hs.URL+"/model", "application/json", strings.NewReader(saved))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var out struct{ Resume string }
	if resp.StatusCode != 200 || json.Unmarshal(body, &out) != nil || out.Resume == "" {
		t.Fatalf("load: %d %s", resp.StatusCode, body)
	}
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(hs.URL, "http")+"/ws?resume="+out.Resume, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var dataset string
	deadline := time.Now().Add(20 * time.Second)
	for {
		ws.SetReadDeadline(deadline)
		mt, b, err := ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if mt == websocket.TextMessage {
			var m map[string]any
			json.Unmarshal(b, &m)
			if m["type"] == "hello" {
				dataset, _ = m["config"].(map[string]any)["dataset"].(string)
			}
			if m["type"] == "error" {
				t.Fatalf("resuming the loaded model: %v", m["error"])
			}
			continue
		}
		d, err := stream.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if d["type"] == "frame" {
			if got := d["bound"].(float64); got != bound {
				t.Fatalf("the loaded model's bound is %v, the saved one's %v", got, bound)
			}
			break
		}
	}
	if !strings.HasPrefix(dataset, "model-") {
		t.Errorf("the loaded model's data set is %q, want its own", dataset)
	}
	for _, tc := range []struct {
		body string
		code int
		want string
	}{
		{"not json", 400, "not a model file"},
		{`{"layers": []}`, 400, "not a model file"},
		{strings.Repeat(" ", maxUploadBytes+10), 413, "larger than"},
	} {
		resp, err := http.Post(hs.URL+"/model", "application/json", bytes.NewReader([]byte(tc.body)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) {
			t.Errorf("%.20q: %d %q, want %d containing %q", tc.body, resp.StatusCode, b, tc.code, tc.want)
		}
	}
}
