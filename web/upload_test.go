package web

import (
	"bytes"
	"dgpviz/internal/admit"
	"dgpviz/internal/stream"
	"dgpviz/internal/wire"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
	hello, d := resumeUntil(t, hs.URL, loadModel(t, hs.URL, saved), "frame")
	if got := d["bound"].(float64); got != bound {
		t.Fatalf("the loaded model's bound is %v, the saved one's %v", got, bound)
	}
	dataset, _ := hello["config"].(map[string]any)["dataset"].(string)
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
		{strings.Repeat(" ", maxUploadBytes+10), 413, "larger than 16 MiB (the server's -max-rows raises the limit)"},
		// Refused while read, at the server's limits (admit.DefaultLimits).
		{`{"data": {"X": [` + strings.Repeat("[0],", 1<<20) + `[0]]}}`, 400, "the model's data has more rows than the limit of 2000 rows"},
		{`{"layers": [{"inducing_inputs": [` + strings.Repeat("[0],", 100) + `[0]]}]}`, 400, "layer 1 has more inducing points than the limit of 64 inducing points"},
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

// TestDataUpload: a CSV sent to POST /data gives a token that resumes a
// session fitting that data (its rows in the setup, its name in the data
// menu's description); bad CSVs get 400 with a reason.
func TestDataUpload(t *testing.T) {
	hs := newSite(t)
	hello, d := resumeUntil(t, hs.URL, uploadCSV(t, hs.URL, "x,y\n0,0\n0.1,0.2\n0.2,0.35\n0.3,0.5\n0.4,0.55\n0.5,0.5\n0.6,0.3\n"), "setup")
	if n := len(d["x"].([]float64)); n != 7 {
		t.Errorf("the session's data has %d rows, the CSV 7", n)
	}
	described := false
	for _, ds := range hello["datasets"].([]any) {
		if ds.(map[string]any)["description"] == "uploaded: mine.csv" {
			described = true
		}
	}
	if !described {
		t.Error("hello does not list the uploaded data set")
	}
	for _, tc := range []struct{ body, want string }{
		{"a,b\n1,2\n", "not a usable CSV"},
		{"x,y\n1,NaN\n2,3\n", "not a usable CSV"},
		{"x,y\n1,2\n", "1 training row: a fit needs at least 2"}, // the rule viz fit follows (TestFitOneRow)
		// Past the server's row limit (admit.DefaultLimits), refused as
		// read, with the flag that raises the limit.
		{"x,y\n" + strings.Repeat("1,2\n", 2001), "line 2002: more data rows than the limit of 2000 rows (-max-rows raises it)"},
	} {
		resp, err := http.Post(hs.URL+"/data", "text/csv", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), tc.want) {
			t.Errorf("%q: %d %q, want 400 containing %q", tc.body, resp.StatusCode, b, tc.want)
		}
	}
}

// loadModel sends a model file as the page's Load model does (POST
// /model) and returns the token that resumes a session from it.
func loadModel(t *testing.T, base, file string) string {
	t.Helper()
	return resumeToken(t, base+"/model", "application/json", file)
}

// resumeToken posts body to url (an upload) and returns the token that
// resumes the session it parks.
func resumeToken(t *testing.T, url, contentType, body string) string {
	t.Helper()
	resp, err := http.Post(url, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var out struct{ Resume string }
	if resp.StatusCode != 200 || json.Unmarshal(b, &out) != nil || out.Resume == "" {
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, b)
	}
	return out.Resume
}

// resumeUntil resumes the session parked under token and reads until a
// binary message of type want, returning the hello and that message; an
// error reply fails the test.
func resumeUntil(t *testing.T, base, token, want string) (map[string]any, map[string]any) {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws?resume="+token, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	var hello map[string]any
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
			switch m["type"] {
			case "hello":
				hello = m
			case "error":
				t.Fatalf("resuming: %v", m["error"])
			}
			continue
		}
		d, err := wire.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if d["type"] == want {
			return hello, d
		}
	}
}

// TestModelUploadBudget: an uploaded model is read within the memory
// budget of one session, and refused while read when it would need more.
func TestModelUploadBudget(t *testing.T) {
	l := admit.DefaultLimits()
	l.SessionMemory = 8 << 20 // the default configuration (the step demo) needs about 5 MiB
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := stream.NewServer(stream.Options{Limits: l, Defaults: admit.DefaultConfig(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(New(srv, srv, log))
	defer hs.Close()
	// 2000 × 600 float64s: 9.6 MB once decoded.
	x := base64.StdEncoding.EncodeToString(make([]byte, 8*2000*600))
	body := `{"data": {"X": {"shape": [2000, 600], "dtype": "float64", "base64": "` + x + `"}}}`
	resp, err := http.Post(hs.URL+"/model", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "the model file needs more memory than a session may use (8 MiB)"; resp.StatusCode != 400 || !strings.Contains(string(b), want) {
		t.Errorf("%d %q, want 400 saying %q", resp.StatusCode, b, want)
	}
}

// TestDataUploadStartsFitting is issue #26's finding: an uploaded data set
// opens fitting (running, not paused), as the demo does.
func TestDataUploadStartsFitting(t *testing.T) {
	hs := newSite(t)
	_, f := resumeUntil(t, hs.URL, uploadCSV(t, hs.URL, "x,y\n0,0\n0.1,0.2\n0.2,0.35\n0.3,0.5\n0.4,0.55\n0.5,0.5\n0.6,0.3\n"), "frame")
	if f["running"] != true || f["paused"] != false {
		t.Errorf("the uploaded data's first frame: running %v, paused %v; want it fitting", f["running"], f["paused"])
	}
}

// uploadCSV sends csv to POST /data as mine.csv and returns the token
// that resumes the session fitting it.
func uploadCSV(t *testing.T, base, csv string) string {
	t.Helper()
	return resumeToken(t, base+"/data?name=mine.csv", "text/csv", csv)
}

// TestUploadLimits: a CSV line past maxLineBytes is refused as it is read
// (400 naming the line); a client's uploads past its allowance get 429
// with Retry-After, said after a pause, while another client's still go.
func TestUploadLimits(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := stream.NewServer(stream.Options{Limits: admit.DefaultLimits(), Defaults: admit.DefaultConfig(), Logger: log, TrustProxy: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(New(srv, srv, log))
	defer hs.Close()
	post := func(from, body string) (int, string, http.Header) {
		req, _ := http.NewRequest("POST", hs.URL+"/data", strings.NewReader(body))
		req.Header.Set("X-Forwarded-For", from)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b), resp.Header
	}
	long := "x,y,z\n0,0," + strings.Repeat("a", maxLineBytes+1) + "\n1,1,b\n"
	if code, body, _ := post("192.0.2.1", long); code != 400 || !strings.Contains(body, "line 2 is longer than 1 MiB") {
		t.Errorf("a long line: %d %q", code, body)
	}
	small := "x,y\n0,0\n1,1\n2,4\n"
	for k := 1; k < 4; k++ { // the long line spent the first of 4
		if code, body, _ := post("192.0.2.1", small); code != 200 {
			t.Fatalf("upload %d: %d %q", k+1, code, body)
		}
	}
	t0 := time.Now()
	code, body, h := post("192.0.2.1", small)
	if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" || !strings.Contains(body, "too many uploads and forks from your address: try again in") {
		t.Errorf("upload past the allowance: %d %q, Retry-After %q", code, body, h.Get("Retry-After"))
	}
	if d := time.Since(t0); d < tooOftenPause {
		t.Errorf("refused after %v, want a pause of %v", d, tooOftenPause)
	}
	if code, body, _ := post("192.0.2.2", small); code != 200 {
		t.Errorf("another client's upload: %d %q", code, body)
	}
}

// TestUploadBytesFollowRows: the upload size limits are the default's
// 16 MiB up to the default row limit, and grow with -max-rows beyond it.
func TestUploadBytesFollowRows(t *testing.T) {
	l := admit.DefaultLimits()
	if got := uploadBytes(maxDataBytes, l); got != maxDataBytes {
		t.Errorf("at %d rows: %d bytes, want %d", l.MaxRows, got, maxDataBytes)
	}
	l.MaxRows = 1000000
	if got := uploadBytes(maxDataBytes, l); got != 1000000*uploadBytesPerRow {
		t.Errorf("at %d rows: %d bytes, want %d", l.MaxRows, got, 1000000*uploadBytesPerRow)
	}
}
