package web

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/modelfile"
	"dgpviz/internal/stream"
	"dgpviz/internal/wire"

	"github.com/gorilla/websocket"
)

// TestModelDownload checks that a live session's model downloads as a model
// file that the engine reads back to the same bound the page shows, with
// the session's normalisation.
func TestModelDownload(t *testing.T) {
	hs := newSite(t)
	key, c := liveSession(t, hs.URL, "play=0&speed=0")
	c.WriteJSON(map[string]any{"id": 5, "op": "step", "n": 20})
	bound := waitApplied(t, c, 5)
	resp, err := http.Get(hs.URL + "/model.json?session=" + key)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Disposition"), "dgpviz-model-step-iter20.json") {
		t.Fatalf("status %d, disposition %q: %s", resp.StatusCode, resp.Header.Get("Content-Disposition"), body)
	}
	mf := readBack(t, string(body), bound)
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

// TestFigureRenderingIsBounded checks the downloads' render gate: a figure
// of an unchanged model is served from the cache, and eight parallel
// requests for a new one draw it once (the others wait for it), so
// downloads cannot take the live sessions' CPU.
func TestFigureRenderingIsBounded(t *testing.T) {
	hs := newSite(t)
	key, c := liveSession(t, hs.URL, "play=0&speed=0")
	// SVG: the gate is the same for every format, and PNG encoding is
	// slow under the race detector (2 s of this test's 3 s).
	u := hs.URL + "/figure/messages.svg?session=" + key + "&samples=2000"
	get := func() (int, string) {
		r, err := http.Get(u)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return r.StatusCode, r.Header.Get("X-Figure-Cache")
	}
	if s, c := get(); s != 200 || c != "miss" {
		t.Fatalf("first: %d %q, want 200 miss", s, c)
	}
	if s, c := get(); s != 200 || c != "hit" {
		t.Fatalf("again, unchanged model: %d %q, want 200 hit", s, c)
	}
	// A step publishes a new model: the next figure is drawn anew, once.
	c.WriteJSON(map[string]any{"id": 9, "op": "step"})
	waitApplied(t, c, 9) // the stepped model is published (the session is paused)
	type res struct {
		status int
		cache  string
	}
	out := make(chan res, 8)
	for range 8 {
		go func() { s, c := get(); out <- res{s, c} }()
	}
	misses := 0
	for range 8 {
		r := <-out
		if r.status != 200 {
			t.Errorf("a parallel download got %d", r.status)
		}
		if r.cache == "miss" {
			misses++
		}
	}
	// One drawing serves all eight; a second is allowed for a model the
	// session republished meanwhile (seen once under a loaded -short -race
	// run), never one per request.
	if misses < 1 || misses > 2 {
		t.Errorf("8 parallel downloads of a new figure drew it %d times, want 1 (2 at most)", misses)
	}
}

// waitApplied reads the session's messages until a frame reports command
// id applied, and returns that frame's bound.
func waitApplied(t *testing.T, c *websocket.Conn, id float64) float64 {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c.SetReadDeadline(deadline)
		mt, b, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if mt != websocket.BinaryMessage {
			continue
		}
		d, err := wire.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if d["type"] == "frame" && d["applied"] == id {
			return d["bound"].(float64)
		}
	}
}

// TestModelDownloadRefersToData: a session on a public data set (the robot
// WiFi file, checksum and all) saves a model file that names the file
// instead of holding its signals, and that reads back to the page's bound;
// loaded on the page (POST /model) and saved again, it still names it.
func TestModelDownloadRefersToData(t *testing.T) {
	path, err := filepath.Abs(filepath.Join("..", "..", "shared", "data", "robot_wireless", "uw-floor.txt"))
	if _, serr := os.Stat(path); err != nil || serr != nil {
		t.Skipf("the robot WiFi data are not at %s: skipping", path)
	}
	// The server and the reader find the file in the data directory.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "robot_wireless"), 0o755)
	if err := os.Symlink(path, filepath.Join(dir, "robot_wireless", "uw-floor.txt")); err != nil {
		t.Fatal(err)
	}
	t.Setenv(dataset.DataDirEnv, dir)
	limits := admit.DefaultLimits()
	cat, err := dataset.NewCatalog([]string{"robot"}, limits.MaxRows)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := stream.NewServer(stream.Options{Limits: limits, Defaults: admit.DefaultConfig(), Catalog: cat, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(New(srv, srv, log))
	t.Cleanup(hs.Close)
	// A small model of the robot's shape: the reference is the data's, not the model's.
	key, c := liveSession(t, hs.URL, "data=robot&hidden=2&m=4&play=0&speed=0")
	c.WriteJSON(map[string]any{"id": 5, "op": "step", "n": 3})
	bound := waitApplied(t, c, 5)
	r, saved := get(t, hs.URL+"/model.json?session="+key)
	if r.StatusCode != 200 || !strings.Contains(saved, `"data_set"`) || !strings.Contains(saved, `"uw-floor.txt"`) {
		t.Fatalf("status %d: the saved model does not refer to uw-floor.txt (%d bytes)", r.StatusCode, len(saved))
	}
	readBack(t, saved, bound)

	hello, _ := resumeUntil(t, hs.URL, loadModel(t, hs.URL, saved), "frame")
	key2, _ := hello["figure_key"].(string)
	r2, again := get(t, hs.URL+"/model.json?session="+key2)
	if r2.StatusCode != 200 || !strings.Contains(again, `"data_set"`) {
		t.Errorf("status %d: the model loaded and saved again holds its data (%d bytes)", r2.StatusCode, len(again))
	}
}

// readBack reads a saved model file and checks that its bound is the
// page's, to the last digit.
func readBack(t *testing.T, saved string, bound float64) *modelfile.File {
	t.Helper()
	mf, err := modelfile.Read(strings.NewReader(saved))
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
	return mf
}
