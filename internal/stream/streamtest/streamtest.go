// Package streamtest is a websocket test harness for dgpviz's live
// sessions (dgpviz/internal/stream), as net/http/httptest is for handlers:
// Start serves a session server on a local address, Dial opens a session
// on it, and a Client sends commands and reads the replies, setups, frames
// and view messages until a predicate accepts one (Until, Ack, FrameAfter,
// Answer); Get and Num read what it decoded. The views' tests drive their
// sessions through it, as the page does, on the same data (RobotData,
// WideData, BlobImages, ViaCSV).
//
// It does not import stream: a test builds its server (stream.NewServer)
// and hands it to Start, so that stream's own tests use it too.
package streamtest

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/wire"

	"github.com/gorilla/websocket"
)

// SquaresCSV is a second, tiny data set ("squares") for the dataset
// command.
const SquaresCSV = "x,y\n0,0\n1,1\n2,4\n3,9\n4,16\n5,25\n6,36\n7,49\n"

// Paused is the query of a session that does not play: it steps only when
// told to.
const Paused = "play=0&speed=0"

// Catalog returns the server's default data sets with "squares" added,
// each of at most maxRows rows.
func Catalog(t testing.TB, maxRows int) *dataset.Catalog {
	t.Helper()
	cat, err := dataset.NewCatalog(nil, maxRows)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.ReadCSV(strings.NewReader(SquaresCSV), "squares", dataset.CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Add(ds, maxRows); err != nil {
		t.Fatal(err)
	}
	return cat
}

// Server is what Serve serves: a session server (stream.Server).
type Server interface {
	http.Handler
	Shutdown(ctx context.Context) error
}

// Serve serves srv's sessions at /ws on a local address until the test
// ends, when it shuts srv down, and returns the websocket URL and the
// HTTP server.
func Serve(t testing.TB, srv Server) (url string, hs *httptest.Server) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/ws", srv)
	hs = httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		hs.Close()
	})
	return "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws", hs
}

// Env is a session server served for a test (Start).
type Env[S Server] struct {
	Srv  S
	URL  string // ws://…/ws
	HTTP *httptest.Server
}

// New builds a server of options o (changed by mutate, when not nil) with
// newServer (stream.NewServer) and serves it until the test ends.
func New[O any, S Server](t testing.TB, o O, mutate func(*O), newServer func(O) (S, error)) *Env[S] {
	t.Helper()
	if mutate != nil {
		mutate(&o)
	}
	srv, err := newServer(o)
	if err != nil {
		t.Fatal(err)
	}
	return Start(t, srv)
}

// Start serves srv (Serve) until the test ends.
func Start[S Server](t testing.TB, srv S) *Env[S] {
	t.Helper()
	url, hs := Serve(t, srv)
	return &Env[S]{Srv: srv, URL: url, HTTP: hs}
}

// Dial opens a session on e with the link parameters query (Dial).
func (e *Env[S]) Dial(t testing.TB, query string) *Client {
	t.Helper()
	return Dial(t, e.URL, query)
}

// Client is a test websocket client that sorts what it reads.
type Client struct {
	t    testing.TB
	Conn *websocket.Conn
	next int64
	// figures keeps the message-figure messages that Until passed over:
	// the worker may answer a command before the command's ack is read
	// (FigureAfter looks here first).
	figures []wire.Decoded
	// follower: the hello said so; its frames show the presenter's
	// commands, numbered by another client.
	follower bool
}

// Dial opens a session at url (Serve's) with the link parameters query,
// closed when the test ends.
func Dial(t testing.TB, url, query string) *Client {
	t.Helper()
	c, resp, err := websocket.DefaultDialer.Dial(url+"?"+query, nil)
	if err != nil {
		t.Fatalf("dial: %v (response %v)", err, resp)
	}
	t.Cleanup(func() { c.Close() })
	return NewClient(t, c)
}

// NewClient is a Client on a connection the test opened itself.
func NewClient(t testing.TB, conn *websocket.Conn) *Client {
	return &Client{t: t, Conn: conn, next: 100}
}

// Msg is one message read from the server: a reply (Text) or a binary
// message (Frame: a frame, a setup or a view's message).
type Msg struct {
	Text  map[string]any
	Frame wire.Decoded
}

// Type is the message's "type".
func (m Msg) Type() string {
	if m.Text != nil {
		s, _ := m.Text["type"].(string)
		return s
	}
	s, _ := m.Frame["type"].(string)
	return s
}

// Read reads one message, failing the test when it is not of the
// protocol's version or does not decode.
func (c *Client) Read(timeout time.Duration) (Msg, error) {
	c.Conn.SetReadDeadline(time.Now().Add(timeout))
	mt, b, err := c.Conn.ReadMessage()
	if err != nil {
		return Msg{}, err
	}
	if mt == websocket.TextMessage {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			c.t.Fatalf("reply is not JSON: %v: %s", err, b)
		}
		if v, _ := m["v"].(float64); v != wire.Version {
			c.t.Fatalf("reply without version %d: %s", wire.Version, b)
		}
		if m["type"] == "hello" && m["follower"] == true {
			c.follower = true
		}
		return Msg{Text: m}, nil
	}
	d, err := wire.Decode(b)
	if err != nil {
		c.t.Fatalf("binary message does not decode: %v", err)
	}
	return Msg{Frame: d}, nil
}

// Until reads until pred accepts a message, failing after timeout.
func (c *Client) Until(what string, timeout time.Duration, pred func(Msg) bool) Msg {
	c.t.Helper()
	end := time.Now().Add(timeout)
	for {
		left := time.Until(end)
		if left <= 0 {
			c.t.Fatalf("timed out waiting for %s", what)
		}
		m, err := c.Read(left)
		if err != nil {
			c.t.Fatalf("waiting for %s: %v", what, err)
		}
		if pred(m) {
			return m
		}
		if m.Frame != nil && m.Type() == "message_figure" && len(c.figures) < 64 {
			c.figures = append(c.figures, m.Frame)
		}
	}
}

// Send sends a command with a fresh id and returns the id.
func (c *Client) Send(cmd map[string]any) int64 {
	c.t.Helper()
	c.next++
	cmd["id"] = c.next
	if err := c.Conn.WriteJSON(cmd); err != nil {
		c.t.Fatalf("send: %v", err)
	}
	return c.next
}

// Reply waits for the ack or error answering id. When id is the last
// command a presenter sent, it fails if a frame that shows id's effect
// comes first: a command's reply goes before its frame.
func (c *Client) Reply(id int64) map[string]any {
	c.t.Helper()
	// Generous: a data-set switch to the robot preset runs its restart
	// selection before replying (RobotWait).
	m := c.Until("reply", RobotWait, func(m Msg) bool {
		if m.Text == nil {
			if a, _ := m.Frame["applied"].(float64); !c.follower && id == c.next && m.Type() == "frame" && int64(a) >= id {
				c.t.Fatalf("the frame showing command %d came before its reply", id)
			}
			return false
		}
		got, _ := m.Text["id"].(float64)
		return int64(got) == id
	})
	return m.Text
}

// Ack sends cmd and fails unless it is acknowledged.
func (c *Client) Ack(cmd map[string]any) int64 {
	c.t.Helper()
	id := c.Send(cmd)
	r := c.Reply(id)
	if r["type"] != "ack" {
		c.t.Fatalf("%v: want ack, got %v", cmd, r)
	}
	return id
}

// Answer waits for the answer to command id: the binary message of type
// answer that names id, or the error reply.
func (c *Client) Answer(id int64, answer string, timeout time.Duration) (wire.Decoded, map[string]any) {
	c.t.Helper()
	m := c.Until(answer, timeout, func(m Msg) bool {
		if m.Text != nil {
			got, _ := m.Text["id"].(float64)
			return int64(got) == id
		}
		got, _ := m.Frame["id"].(float64)
		return m.Type() == answer && int64(got) == id
	})
	return m.Frame, m.Text
}

// FrameAfter waits for the first frame that reflects command id.
func (c *Client) FrameAfter(id int64) wire.Decoded {
	c.t.Helper()
	return c.Until("frame", 10*time.Second, func(m Msg) bool {
		if m.Frame == nil || m.Type() != "frame" {
			return false
		}
		a, _ := m.Frame["applied"].(float64)
		return int64(a) >= id
	}).Frame
}

// FigureAfter waits for the first message figure that reflects command id.
func (c *Client) FigureAfter(id int64) wire.Decoded {
	c.t.Helper()
	for i, f := range c.figures {
		if a, _ := f["applied"].(float64); int64(a) >= id {
			c.figures = c.figures[i+1:]
			return f
		}
	}
	c.figures = nil
	return c.Until("mc message", 10*time.Second, func(m Msg) bool {
		if m.Frame == nil || m.Type() != "message_figure" {
			return false
		}
		a, _ := m.Frame["applied"].(float64)
		return int64(a) >= id
	}).Frame
}

// Get walks a decoded message: Get(f, "layers", 0, "z").
func Get(v any, path ...any) any {
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

// Num is v as a number, NaN when it is none.
func Num(v any) float64 {
	f, ok := v.(float64)
	if !ok {
		return math.NaN()
	}
	return f
}

// Floats is v as a decoded numeric section, nil when it is none.
func Floats(v any) []float64 { f, _ := v.([]float64); return f }

// Eventually polls cond every 10 ms until it holds, failing with what
// (and the state it reports) after timeout.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(what())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
