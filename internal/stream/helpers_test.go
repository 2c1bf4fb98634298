package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/wire"

	"github.com/gorilla/websocket"
	"gonum.org/v1/gonum/mat"
)

// testCSV is a second, tiny data set for the dataset command.
const testCSV = "x,y\n0,0\n1,1\n2,4\n3,9\n4,16\n5,25\n6,36\n7,49\n"

func testCatalog(t testing.TB, l admit.Limits) *dataset.Catalog {
	t.Helper()
	cat, err := dataset.NewCatalog(nil, l.MaxRows)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.ReadCSV(strings.NewReader(testCSV), "squares", dataset.CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Add(ds, l.MaxRows); err != nil {
		t.Fatal(err)
	}
	return cat
}

type testEnv struct {
	srv  *Server
	http *httptest.Server
	url  string // ws://…/ws
}

func newEnv(t testing.TB, mutate func(*Options)) *testEnv {
	t.Helper()
	l := admit.DefaultLimits()
	// A 300-iteration baseline: the full one costs ~20 s of CPU under
	// -race beside the tests that measure timings.
	o := Options{Limits: l, Defaults: admit.DefaultConfig(), Workers: 1, BaselineIters: 300}
	o.Catalog = testCatalog(t, l)
	if mutate != nil {
		mutate(&o)
	}
	srv, err := NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ws", srv)
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		hs.Close()
	})
	return &testEnv{srv: srv, http: hs, url: "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"}
}

// client is a test websocket client that sorts what it reads.
type client struct {
	t    testing.TB
	c    *websocket.Conn
	next int64
	// figures keeps the message-figure messages that until passed over:
	// the worker may answer a command before the command's ack is read
	// (mcAfter looks here first).
	figures []wire.Decoded
}

func (e *testEnv) dial(t testing.TB, query string) *client {
	t.Helper()
	c, resp, err := websocket.DefaultDialer.Dial(e.url+"?"+query, nil)
	if err != nil {
		t.Fatalf("dial: %v (response %v)", err, resp)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, c: c, next: 100}
}

// msg is one message read from the server.
type msg struct {
	text  map[string]any // replies
	frame wire.Decoded   // binary (frame or setup)
}

func (m msg) typ() string {
	if m.text != nil {
		s, _ := m.text["type"].(string)
		return s
	}
	s, _ := m.frame["type"].(string)
	return s
}

func (c *client) read(timeout time.Duration) (msg, error) {
	c.c.SetReadDeadline(time.Now().Add(timeout))
	mt, b, err := c.c.ReadMessage()
	if err != nil {
		return msg{}, err
	}
	if mt == websocket.TextMessage {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			c.t.Fatalf("reply is not JSON: %v: %s", err, b)
		}
		if v, _ := m["v"].(float64); v != ProtocolVersion {
			c.t.Fatalf("reply without version %d: %s", ProtocolVersion, b)
		}
		return msg{text: m}, nil
	}
	d, err := wire.Decode(b)
	if err != nil {
		c.t.Fatalf("binary message does not decode: %v", err)
	}
	return msg{frame: d}, nil
}

// until reads until pred accepts a message, failing after timeout.
func (c *client) until(what string, timeout time.Duration, pred func(msg) bool) msg {
	c.t.Helper()
	end := time.Now().Add(timeout)
	for {
		left := time.Until(end)
		if left <= 0 {
			c.t.Fatalf("timed out waiting for %s", what)
		}
		m, err := c.read(left)
		if err != nil {
			c.t.Fatalf("waiting for %s: %v", what, err)
		}
		if pred(m) {
			return m
		}
		if m.frame != nil && m.typ() == "message_figure" && len(c.figures) < 64 {
			c.figures = append(c.figures, m.frame)
		}
	}
}

// send sends a command with a fresh id and returns the id.
func (c *client) send(cmd map[string]any) int64 {
	c.t.Helper()
	c.next++
	cmd["id"] = c.next
	if err := c.c.WriteJSON(cmd); err != nil {
		c.t.Fatalf("send: %v", err)
	}
	return c.next
}

// reply waits for the ack or error answering id.
func (c *client) reply(id int64) map[string]any {
	c.t.Helper()
	// Generous: a data-set switch to the robot preset runs its restart
	// selection before replying, which under -race on a loaded 2-core
	// machine can take over 10 s.
	m := c.until("reply", 30*time.Second, func(m msg) bool {
		if m.text == nil {
			return false
		}
		got, _ := m.text["id"].(float64)
		return int64(got) == id
	})
	return m.text
}

// ack sends cmd and fails unless it is acknowledged.
func (c *client) ack(cmd map[string]any) int64 {
	c.t.Helper()
	id := c.send(cmd)
	r := c.reply(id)
	if r["type"] != "ack" {
		c.t.Fatalf("%v: want ack, got %v", cmd, r)
	}
	return id
}

// frameAfter waits for the first frame that reflects command id.
func (c *client) frameAfter(id int64) wire.Decoded {
	c.t.Helper()
	return c.until("frame", 10*time.Second, func(m msg) bool {
		if m.frame == nil || m.typ() != "frame" {
			return false
		}
		a, _ := m.frame["applied"].(float64)
		return int64(a) >= id
	}).frame
}

// get walks a decoded message: get(f, "layers", 0, "z").
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			if m == nil {
				if d, ok := v.(wire.Decoded); ok {
					m = d
				}
			}
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func num64(v any) float64 {
	f, ok := v.(float64)
	if !ok {
		return math.NaN()
	}
	return f
}

func floats(v any) []float64 { f, _ := v.([]float64); return f }

// eventually polls cond every 10 ms until it holds, failing with what
// (and the state it reports) after timeout.
func eventually(t testing.TB, timeout time.Duration, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(what())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wideDataset is robot-shaped synthetic data: n scans in time, d smooth
// signals.
func wideDataset(n, d int) *dataset.Dataset {
	x := mat.NewDense(n, 1, nil)
	y := mat.NewDense(n, d, nil)
	names := make([]string, d)
	for j := range d {
		names[j] = fmt.Sprintf("ap%d", j)
	}
	for i := range n {
		t := float64(i)
		x.Set(i, 0, t)
		for j := range d {
			y.Set(i, j, math.Sin(t/20+float64(j))+0.1*math.Cos(t*float64(j+1)))
		}
	}
	return &dataset.Dataset{Name: "wide", Description: "synthetic robot-shaped data", X: x, Y: y, InputNames: []string{"time"}, OutputNames: names}
}
