package main

import (
	"bytes"
	"context"
	"dgpviz/internal/admit"
	"dgpviz/internal/engine"
	"dgpviz/internal/train"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// syncBuffer is a bytes.Buffer safe for the server's and the test's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// startServe runs `viz args…` until the returned cancel is called and
// returns the URL it printed.
func startServe(t *testing.T, args ...string) (url string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, &out, &errOut) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "serving on ") {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("viz %v exited: %v\n%s", args, err, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("viz %v printed no URL; stderr:\n%s", args, errOut.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	url = strings.TrimSpace(strings.TrimPrefix(out.String(), "dgpviz: serving on "))
	return url, func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("viz did not stop within 10 s")
			return nil
		}
	}
}

func TestServeBareCommandServesPage(t *testing.T) {
	url, stop := startServe(t, "-addr", "127.0.0.1:0", "-log-level", "warn")
	body := pageOf(t, url)
	if !strings.Contains(string(body), `data-testid="bound-value"`) {
		t.Fatalf("GET /:\n%.300s", body)
	}
	for _, p := range []string{"static/app.js", "static/panels/layer.js", "static/style.css"} {
		r, err := http.Get(url + p)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != 200 {
			t.Errorf("GET %s: %d", p, r.StatusCode)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("serve returned %v after the signal", err)
	}
}

// On SIGINT/SIGTERM (a cancelled context) every websocket session gets a
// close frame (1001) and serve returns nil.
func TestServeShutdownClosesSessions(t *testing.T) {
	url, stop := startServe(t, "serve", "-addr", "127.0.0.1:0", "-paused", "-log-level", "warn")
	ws := "ws" + strings.TrimPrefix(url, "http") + "ws"
	var conns []*websocket.Conn
	for range 2 {
		c, _, err := websocket.DefaultDialer.Dial(ws, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, _, err := c.ReadMessage(); err != nil { // hello
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	errs := make(chan error, len(conns))
	for _, c := range conns {
		go func() {
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	if err := stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	for range conns {
		if err := <-errs; !websocket.IsCloseError(err, websocket.CloseGoingAway) {
			t.Errorf("want close 1001 going away, got %v", err)
		}
	}
}

func TestServeFlags(t *testing.T) {
	o, err := parseServe([]string{"-hidden", "2, 3", "-inducing", "20", "-optimizer", "adam", "-seed", "9", "-speed", "0", "-paused", "-allow-origin", "*.Example.org"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := o.cfg
	if len(c.Hidden) != 2 || c.Hidden[0] != 2 || c.Hidden[1] != 3 || c.Inducing != 20 || c.Method != (train.Adam{}) || c.Seed != 9 || c.Speed != 0 || c.Play {
		t.Errorf("parsed %+v", c)
	}
	if o.addr != "127.0.0.1:8080" || o.origins[0] != "*.example.org" {
		t.Errorf("addr %q origins %v", o.addr, o.origins)
	}
	for _, bad := range [][]string{
		{"-hidden", "a,b"},
		{"-inducing", "0"},
		{"-hidden", "1,100"},
		{"-optimizer", "sgd"},
		{"-data", "nosuch"},
		{"-data", "csv:/nonexistent/file.csv"},
		{"-addr", "256.0.0.1:99999"},
		{"extra-arg"},
	} {
		err := run(context.Background(), append([]string{"serve"}, bad...), io.Discard, io.Discard)
		if _, ok := err.(usageError); !ok {
			t.Errorf("serve %v: want a usage error, got %v", bad, err)
		}
	}
}

func TestServeDataFlag(t *testing.T) {
	url, stop := startServe(t, "-addr", "127.0.0.1:0", "-data", "csv:../../internal/dataset/testdata/good.csv", "-data", "step", "-log-level", "warn")
	defer stop()
	body := pageOf(t, url)
	if !strings.Contains(string(body), `value="csv:good.csv" selected`) || !strings.Contains(string(body), `value="step"`) {
		t.Errorf("page does not offer the csv data set as the default:\n%s", body)
	}
}

// TestServeShapeAppliesToImages: -shape makes images of the CSVs whose
// outputs it fits and leaves the others (the README's examples served
// together); when none fits, it says what the first has.
func TestServeShapeAppliesToImages(t *testing.T) {
	url, stop := startServe(t, "-addr", "127.0.0.1:0", "-data", "csv:../../examples/loop.csv", "-data", "csv:../../examples/spot.csv", "-shape", "8x8", "-log-level", "warn")
	defer stop()
	body := pageOf(t, url)
	if !strings.Contains(string(body), `value="csv:loop.csv" selected`) || !strings.Contains(string(body), `value="csv:spot.csv"`) {
		t.Errorf("the page does not offer both examples:\n%.2000s", body)
	}
	err := run(context.Background(), []string{"serve", "-addr", "127.0.0.1:0", "-data", "csv:../../examples/loop.csv", "-shape", "8x8"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "images of 8 × 8 pixels need 64 outputs; csv:loop.csv has 8") || strings.Count(err.Error(), "-shape") > 1 {
		t.Errorf("-shape that fits no CSV: %v", err)
	}
}

// pageOf returns the body of GET url, failing unless it is 200 OK.
func pageOf(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d, %v\n%.300s", url, resp.StatusCode, err, body)
	}
	return body
}

// TestServeRowLimitFollowsAddress: on a loopback address the row limit is
// as many rows as a model may have; on any other, the public default;
// -max-rows sets it either way, and a data set past it is refused with a
// message that names the flag.
func TestServeRowLimitFollowsAddress(t *testing.T) {
	public := admit.DefaultLimits().MaxRows
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"-addr", "127.0.0.1:0"}, engine.MaxData},
		{[]string{"-addr", "[::1]:0"}, engine.MaxData},
		{[]string{"-addr", "localhost:0"}, engine.MaxData},
		{[]string{"-addr", "0.0.0.0:8080"}, public},
		{[]string{"-addr", ":8080"}, public},
		{[]string{"-addr", "192.0.2.1:8080"}, public},
		{[]string{"-addr", "127.0.0.1:0", "-max-rows", "50"}, 50},
		{[]string{"-addr", ":0", "-max-rows", "5000"}, 5000},
	} {
		o, err := parseServe(c.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if o.limits.MaxRows != c.want {
			t.Errorf("%v: row limit %d, want %d", c.args, o.limits.MaxRows, c.want)
		}
	}
	path := filepath.Join(t.TempDir(), "long.csv")
	if err := os.WriteFile(path, []byte("x,y\n"+strings.Repeat("1,2\n", 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"serve", "-addr", "127.0.0.1:0", "-max-rows", "35", "-data", path}, io.Discard, io.Discard)
	if want := "40 training rows, more than the limit of 35 rows (-max-rows raises it)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}
