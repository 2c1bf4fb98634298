package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"

	"github.com/gorilla/websocket"
)

func TestFramesArriveAndDecode(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	hello := c.Until("hello", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "hello" }).Text
	if streamtest.Get(hello, "config", "dataset") != "step" || streamtest.Get(hello, "limits", "max_inducing") == nil {
		t.Fatalf("hello lacks config or limits: %v", hello)
	}
	setup := c.Until("setup", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "setup" }).Frame
	if n := streamtest.Num(setup["n"]); n != 30 {
		t.Fatalf("setup n = %v, want 30", n)
	}
	if x := streamtest.Floats(setup["x"]); len(x) != 30 {
		t.Fatalf("setup x has %d values", len(x))
	}
	f := c.Until("frame", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" }).Frame
	if b := streamtest.Num(f["bound"]); math.IsNaN(b) || math.IsInf(b, 0) {
		t.Fatalf("frame bound %v", f["bound"])
	}
	layers, _ := f["layers"].([]any)
	if len(layers) != 3 {
		t.Fatalf("%d layers, want 3", len(layers))
	}
	for i := range layers {
		m := int(streamtest.Num(streamtest.Get(f, "layers", i, "m")))
		if m != 12 {
			t.Errorf("layer %d: m = %d, want 12", i, m)
		}
		for _, k := range []string{"z", "u_mean", "u_var"} {
			if len(streamtest.Floats(streamtest.Get(f, "layers", i, k))) != m {
				t.Errorf("layer %d: %s has %d values, want %d", i, k, len(streamtest.Floats(streamtest.Get(f, "layers", i, k))), m)
			}
		}
		for _, k := range []string{"mean", "var", "comp", "prop"} {
			if len(streamtest.Floats(streamtest.Get(f, "layers", i, k))) != 30 {
				t.Errorf("layer %d: %s has %d values, want 30", i, k, len(streamtest.Floats(streamtest.Get(f, "layers", i, k))))
			}
		}
		for _, k := range []string{"kl", "compression", "propagation", "noise"} {
			if v := streamtest.Num(streamtest.Get(f, "layers", i, k)); math.IsNaN(v) {
				t.Errorf("layer %d: %s = %v", i, k, streamtest.Get(f, "layers", i, k))
			}
		}
		g := int(streamtest.Num(streamtest.Get(f, "layers", i, "grid", "g")))
		for _, k := range []string{"x", "mean", "var_u", "var_cond"} {
			if len(streamtest.Floats(streamtest.Get(f, "layers", i, "grid", k))) != g || g != view.GridPoints {
				t.Errorf("layer %d: grid.%s has %d values, want %d", i, k, len(streamtest.Floats(streamtest.Get(f, "layers", i, "grid", k))), view.GridPoints)
			}
		}
	}
	if len(streamtest.Floats(streamtest.Get(f, "view", "fit", "mean"))) != view.GridPoints {
		t.Errorf("fit.mean missing")
	}
	if streamtest.Get(f, "optimizer", "method") != "lbfgs" || f["running"] != false {
		t.Errorf("optimizer state %v running %v", f["optimizer"], f["running"])
	}
}

func TestCommandsTakeEffect(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	first := c.Until("frame", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" }).Frame

	// step
	id := c.Ack(map[string]any{"op": "step", "n": 3})
	f := c.FrameAfter(id)
	if it := streamtest.Num(f["iter"]); it != 3 {
		t.Fatalf("after step 3: iter %v", it)
	}
	if streamtest.Num(f["bound"]) == streamtest.Num(first["bound"]) {
		t.Errorf("step did not change the bound")
	}

	// move an inducing point: Z and the bound change in the next frame
	z0 := streamtest.Floats(streamtest.Get(f, "layers", 1, "z"))[4]
	id = c.Ack(map[string]any{"op": "move", "layer": 1, "index": 4, "z": []float64{z0 + 0.7}, "mu": []float64{1.5}})
	g := c.FrameAfter(id)
	if z := streamtest.Floats(streamtest.Get(g, "layers", 1, "z"))[4]; math.Abs(z-(z0+0.7)) > 1e-5 {
		t.Errorf("moved z = %v, want %v", z, z0+0.7)
	}
	if mu := streamtest.Floats(streamtest.Get(g, "layers", 1, "u_mean"))[4]; math.Abs(mu-1.5) > 1e-5 {
		t.Errorf("moved mu = %v, want 1.5", mu)
	}
	if streamtest.Num(g["bound"]) == streamtest.Num(f["bound"]) {
		t.Errorf("move did not change the bound")
	}

	// add and remove
	id = c.Ack(map[string]any{"op": "add", "layer": 0, "z": []float64{0.1}})
	if m := streamtest.Num(streamtest.Get(c.FrameAfter(id), "layers", 0, "m")); m != 13 {
		t.Errorf("after add: m = %v, want 13", m)
	}
	id = c.Ack(map[string]any{"op": "remove", "layer": 0, "index": 0})
	id = c.Ack(map[string]any{"op": "remove", "layer": 0, "index": 0})
	if m := streamtest.Num(streamtest.Get(c.FrameAfter(id), "layers", 0, "m")); m != 11 {
		t.Errorf("after 2 removes: m = %v, want 11", m)
	}

	// optimizer and freeze
	id = c.Ack(map[string]any{"op": "optimizer", "method": "adam", "learning_rate": 0.05})
	f = c.FrameAfter(id)
	if streamtest.Get(f, "optimizer", "method") != "adam" || streamtest.Num(streamtest.Get(f, "optimizer", "learning_rate")) != 0.05 {
		t.Errorf("optimizer not applied: %v", f["optimizer"])
	}
	id = c.Ack(map[string]any{"op": "freeze", "group": "inducing", "frozen": true})
	f = c.FrameAfter(id)
	if fr, _ := streamtest.Get(f, "optimizer", "frozen").([]any); len(fr) != 1 || fr[0] != "inducing" {
		t.Errorf("frozen = %v", streamtest.Get(f, "optimizer", "frozen"))
	}
	zBefore := append([]float64(nil), streamtest.Floats(streamtest.Get(f, "layers", 0, "z"))...)
	id = c.Ack(map[string]any{"op": "step", "n": 5})
	f = c.FrameAfter(id)
	for k, z := range streamtest.Floats(streamtest.Get(f, "layers", 0, "z")) {
		if z != zBefore[k] {
			t.Fatalf("frozen inducing inputs moved: %v → %v", zBefore, streamtest.Floats(streamtest.Get(f, "layers", 0, "z")))
		}
	}
	id = c.Ack(map[string]any{"op": "freeze", "group": "inducing", "frozen": false})
	if fr, _ := streamtest.Get(c.FrameAfter(id), "optimizer", "frozen").([]any); len(fr) != 0 {
		t.Errorf("unfreeze: frozen = %v", fr)
	}

	// play and pause
	id = c.Ack(map[string]any{"op": "play"})
	it0 := streamtest.Num(c.FrameAfter(id)["iter"])
	c.Until("progress", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" && streamtest.Num(m.Frame["iter"]) > it0+5 })
	id = c.Ack(map[string]any{"op": "pause"})
	f = c.FrameAfter(id)
	if f["running"] != false {
		t.Errorf("pause: running = %v", f["running"])
	}

	// speed
	r := c.Reply(c.Send(map[string]any{"op": "speed", "speed": 10}))
	if r["type"] != "ack" || streamtest.Num(streamtest.Get(r, "config", "speed")) != 10 {
		t.Errorf("speed: %v", r)
	}

	// reset with a seed
	id = c.Ack(map[string]any{"op": "reset", "seed": 7})
	f = c.FrameAfter(id)
	if streamtest.Num(f["iter"]) != 0 {
		t.Errorf("after reset: iter %v", f["iter"])
	}
	r = c.Reply(c.Send(map[string]any{"op": "step"}))
	if streamtest.Num(streamtest.Get(r, "config", "seed")) != 7 {
		t.Errorf("after reset: config %v", r["config"])
	}

	// architecture
	id = c.Ack(map[string]any{"op": "architecture", "hidden": []int{2}, "inducing": 8})
	f = c.FrameAfter(id)
	if n := len(f["layers"].([]any)); n != 2 || streamtest.Num(streamtest.Get(f, "layers", 0, "d")) != 2 || streamtest.Num(streamtest.Get(f, "layers", 1, "m")) != 8 {
		t.Errorf("architecture: %d layers, d0 %v, m1 %v", n, streamtest.Get(f, "layers", 0, "d"), streamtest.Get(f, "layers", 1, "m"))
	}

	// data set: a new setup precedes frames with its data_id
	id = c.Send(map[string]any{"op": "dataset", "dataset": "csv:squares"})
	s := c.Until("setup", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "setup" }).Frame
	if s["name"] != "csv:squares" || streamtest.Num(s["n"]) != 8 || streamtest.Num(s["data_id"]) != 2 {
		t.Errorf("setup after dataset: name %v n %v data_id %v", s["name"], s["n"], s["data_id"])
	}
	f = c.FrameAfter(id)
	if streamtest.Num(f["data_id"]) != 2 || streamtest.Num(f["n"]) != 8 {
		t.Errorf("frame after dataset: data_id %v n %v", f["data_id"], f["n"])
	}
}

func TestHostileCommandsGetErrors(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	c.Until("frame", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	huge := `{"op":"move","layer":0,"index":0,"z":[` + strings.Repeat("1,", 60000) + `1]}`
	cases := []struct {
		name, raw, want string
		binary          bool
	}{
		{"bad json", `{"op": "play"`, "malformed", false},
		{"not an object", `[1,2,3]`, "not a", false},
		{"empty", ``, "malformed", false},
		{"no op", `{"id": 3}`, "missing \"op\"", false},
		{"unknown op", `{"op":"explode"}`, "unknown op", false},
		{"unknown field", `{"op":"play","bogus":1}`, "unknown field", false},
		{"NaN literal", `{"op":"move","layer":0,"index":0,"z":[NaN]}`, "malformed", false},
		{"NaN string", `{"op":"move","layer":0,"index":0,"z":["NaN"]}`, "is not a", false},
		{"overflow", `{"op":"move","layer":0,"index":0,"z":[1e400]}`, "", false},
		{"far coordinate", `{"op":"move","layer":0,"index":0,"z":[1e6]}`, "out of range", false},
		// Layers and points are counted from 1 in texts people read.
		{"layer out of range", `{"op":"move","layer":9,"index":0,"z":[0]}`, "there is no layer 10 (the model has 3 layers)", false},
		{"negative layer", `{"op":"remove","layer":-1,"index":0}`, "there is no layer 0", false},
		{"index out of range", `{"op":"move","layer":0,"index":99,"z":[0]}`, "layer 1 has no inducing point 100", false},
		{"z wrong length", `{"op":"move","layer":0,"index":0,"z":[0,1]}`, "layer 1 has 1-D inputs", false},
		{"undo nothing", `{"op":"undo"}`, "nothing to undo", false},
		{"redo nothing", `{"op":"redo"}`, "nothing to redo", false},
		{"add_data no y", `{"op":"add_data","x":[0.1]}`, "give \"x\" and \"y\"", false},
		{"remove_data bad index", `{"op":"remove_data","index":500}`, "there is no data point 501", false},
		{"move_data nothing", `{"op":"move_data","index":0}`, "give \"x\" and/or \"y\"", false},
		{"move nothing", `{"op":"move","layer":0,"index":0}`, "give", false},
		{"too many steps", `{"op":"step","n":1000000000}`, "out of range", false},
		{"unknown group", `{"op":"freeze","group":"everything"}`, "unknown group", false},
		{"bad method", `{"op":"optimizer","method":"sgd"}`, "method", false},
		{"negative lr", `{"op":"optimizer","learning_rate":-1}`, "learning_rate", false},
		{"too wide", `{"op":"architecture","hidden":[1000]}`, "out of range", false},
		{"too deep", `{"op":"architecture","hidden":[1,1,1,1,1,1,1,1,1]}`, "limit", false},
		{"too many inducing", `{"op":"architecture","inducing":100000}`, "out of range", false},
		{"unknown data set", `{"op":"dataset","dataset":"/etc/passwd"}`, "unknown data set", false},
		{"file data set", `{"op":"dataset","dataset":"csv:/etc/passwd"}`, "unknown data set", false},
		{"negative speed", `{"op":"speed","speed":-5}`, "speed", false},
		{"wrong type", `{"op":"step","n":"many"}`, "is not a", false},
		{"huge payload", huge, "larger than", false},
		{"binary", "\x00\x01\x02", "binary", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mt := websocket.TextMessage
			if tc.binary {
				mt = websocket.BinaryMessage
			}
			if err := c.Conn.WriteMessage(mt, []byte(tc.raw)); err != nil {
				t.Fatal(err)
			}
			m := c.Until("error", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "error" || m.Type() == "ack" })
			if m.Type() != "error" {
				t.Fatalf("want an error, got %v", m.Text)
			}
			// Errors are for people: no "stream: " package prefix.
			if e, _ := m.Text["error"].(string); !strings.Contains(e, tc.want) || strings.Contains(e, "stream: ") {
				t.Errorf("error %q does not contain %q (or has a package prefix)", e, tc.want)
			}
		})
	}
	// The session is still up and works.
	id := c.Ack(map[string]any{"op": "step"})
	if f := c.FrameAfter(id); f["bound"] == nil {
		t.Fatalf("no bound after hostile commands: %v", f["eval_error"])
	}
	if e.Srv.Sessions() != 1 {
		t.Fatalf("%d sessions, want 1", e.Srv.Sessions())
	}
}

func TestHardLimitCloses(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	c.Until("frame", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	c.Conn.WriteMessage(websocket.TextMessage, make([]byte, hardReadLimit+10))
	for {
		_, err := c.Read(5 * time.Second)
		if err == nil {
			continue
		}
		if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
			t.Fatalf("want close 1009, got %v", err)
		}
		return
	}
}

// A client that never reads must not block the optimizer or make the
// server buffer frames.
func TestNonReadingClient(t *testing.T) {
	if testing.Short() {
		t.Skip("counts the optimizer's iterations over 3 s: timing-sensitive, run alone in the full tier (-p 1)")
	}
	// Large frames (400 rows through a 3-wide hidden layer) fill the socket
	// buffers within a second. One output: the regression view, which
	// builds at once (the explorer's preset restarts take minutes under
	// -race).
	e := newEnv(t, func(o *Options) { o.Catalog.Add(streamtest.WideData(400, 1), o.Limits.MaxRows) })
	// A tiny receive buffer makes the server's writes block quickly.
	d := *websocket.DefaultDialer
	d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nd := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) {
				syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
			})
		}}
		return nd.DialContext(ctx, network, addr)
	}
	ws, _, err := d.Dial(e.URL+"?play=1&speed=0&data=wide&hidden=3&m=30", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	c := streamtest.NewClient(t, ws) // never read until the end
	streamtest.Eventually(t, 30*time.Second, func() bool { st := e.Srv.SessionStats(); return len(st) == 1 && st[0].Iterations > 0 },
		func() string { return "the session made no iterations" })
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	start := time.Now()
	s0 := e.Srv.SessionStats()[0]
	time.Sleep(3 * time.Second)
	s1 := e.Srv.SessionStats()[0]
	elapsed := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&ms1)
	iters, frames, pubs := s1.Iterations-s0.Iterations, s1.Frames-s0.Frames, s1.Published-s0.Published
	t.Logf("%v: %d iterations, %d snapshots published, %d dropped, %d frames written; heap %d → %d KiB",
		elapsed, iters, pubs, s1.Dropped-s0.Dropped, frames, ms0.HeapAlloc>>10, ms1.HeapAlloc>>10)
	// Snapshots are dropped once the socket buffers are full and the writer
	// waits: within a second when the optimizer is fast, later when it is
	// slow (an ill-conditioned fit takes the exact ΣΨ2, which the race
	// detector slows most).
	for wait := time.Now().Add(20 * time.Second); s1.Dropped == s0.Dropped && time.Now().Before(wait); {
		time.Sleep(50 * time.Millisecond)
		s1 = e.Srv.SessionStats()[0]
	}
	if s1.Dropped == s0.Dropped {
		t.Fatalf("no snapshot was dropped in %v: latest-wins hand-over not exercised", time.Since(start).Round(time.Second))
	}
	// A blocked optimizer would stop once the socket buffers are full (they
	// are: the writer waits); it carries on.
	time.Sleep(time.Second)
	s2 := e.Srv.SessionStats()[0]
	if s2.Iterations <= s1.Iterations {
		t.Errorf("the optimizer made no iteration in the second after the writer began to wait (%d iterations before)", iters)
	}
	frames, elapsed = s2.Frames-s0.Frames, time.Since(start)
	if max := int64(elapsed/FrameInterval) + 3; frames > max {
		t.Errorf("%d frames in %v exceed the 60/s limit (%d)", frames, elapsed, max)
	}
	if ms1.HeapAlloc > ms0.HeapAlloc+32<<20 {
		t.Errorf("heap grew from %d to %d bytes", ms0.HeapAlloc, ms1.HeapAlloc)
	}
	// When it finally reads, the client gets current frames, not a
	// backlog: a command sent now is reflected in a frame within seconds.
	// (Frame iterations count accepted steps only, so they are not
	// compared with Stats.Iterations, which counts every step.)
	id := c.Send(map[string]any{"op": "pause"})
	if f := c.FrameAfter(id); f == nil {
		t.Fatal("no fresh frame")
	}
}

func TestShutdownClosesSessions(t *testing.T) {
	e := newEnv(t, nil)
	var cs []*streamtest.Client
	for range 3 {
		c := e.Dial(t, "play=1")
		c.Until("frame", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
		cs = append(cs, c)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(cs))
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if _, err := c.Read(10 * time.Second); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
			t.Errorf("client %d: want close 1001, got %v", i, err)
		}
	}
	if n := e.Srv.Sessions(); n != 0 {
		t.Errorf("%d sessions after shutdown", n)
	}
	// New sessions are refused with a close frame.
	c := e.Dial(t, "")
	if _, err := c.Read(5 * time.Second); !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		for err == nil {
			_, err = c.Read(5 * time.Second)
		}
		if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
			t.Errorf("after shutdown: want close 1001, got %v", err)
		}
	}
}

func TestSessionLimit(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Limits.MaxSessions = 1 })
	c1 := e.Dial(t, streamtest.Paused)
	c1.Until("frame", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	c2 := e.Dial(t, streamtest.Paused)
	var err error
	for err == nil {
		_, err = c2.Read(5 * time.Second)
	}
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseTryAgainLater || !strings.Contains(ce.Text, "too many sessions") {
		t.Fatalf("want close 1013 naming the limit, got %v", err)
	}
	c1.Ack(map[string]any{"op": "step"}) // the first session is unaffected
}

func TestBadConfigURL(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, "hidden=1,99")
	var gotErr string
	var err error
	for err == nil {
		var m streamtest.Msg
		m, err = c.Read(5 * time.Second)
		if m.Type() == "error" {
			gotErr, _ = m.Text["error"].(string)
		}
	}
	if !strings.Contains(gotErr, "hidden layer 2: width 99") {
		t.Errorf("error reply %q does not name the bad width", gotErr)
	}
	if !websocket.IsCloseError(err, websocket.ClosePolicyViolation) {
		t.Errorf("want close 1008, got %v", err)
	}
}

func TestCheckOrigin(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.AllowedOrigins = []string{"*.example.org"} })
	host := strings.TrimPrefix(e.HTTP.URL, "http://")
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{"http://" + host, true},
		{"http://evil.test", false},
		{"http://lecture.example.org", true},
		{"http://example.org.evil.test", false},
	} {
		h := http.Header{}
		if tc.origin != "" {
			h.Set("Origin", tc.origin)
		}
		c, resp, err := websocket.DefaultDialer.Dial(e.URL+"?"+streamtest.Paused, h)
		if tc.ok != (err == nil) {
			t.Errorf("origin %q: err %v, want ok=%v", tc.origin, err, tc.ok)
		}
		if err != nil && resp != nil && resp.StatusCode != http.StatusForbidden {
			t.Errorf("origin %q: status %d, want 403", tc.origin, resp.StatusCode)
		}
		if c != nil {
			c.Close()
		}
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{`{"op":"play"}`, `{"op":"move","layer":0,"index":1,"z":[0.5],"mu":[1]}`, `{"op":"step","n":3}`, `[`, `{"op":"add","z":[1e999]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCommand(b)
		if err == nil {
			for _, v := range append(c.Z, c.Mu...) {
				if math.IsNaN(v) || math.Abs(v) > MaxCoordinate {
					t.Fatalf("accepted coordinate %v", v)
				}
			}
		}
	})
}

// TestLongStepNoLockOut is issue #16's lock-out: a step of the most
// iterations on a heavy model is acknowledged at once, other commands are
// answered while it runs, and closing the socket stops the work and frees
// the session slot for the next client.
func TestLongStepNoLockOut(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Limits.MaxSessions = 1 })
	c := e.Dial(t, streamtest.Paused+"&hidden=8,8,8&m=64")
	c.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	start := time.Now()
	c.Ack(map[string]any{"op": "step", "n": e.Srv.limits.MaxSteps})
	if d := time.Since(start); d > time.Second {
		t.Errorf("step %d acknowledged after %v, want < 1 s", e.Srv.limits.MaxSteps, d)
	}
	start = time.Now()
	c.Ack(map[string]any{"op": "speed", "speed": 10})
	t.Logf("a command during the step answered in %v", time.Since(start).Round(time.Millisecond))
	if d := time.Since(start); d > time.Second {
		t.Errorf("a command during the step waited %v, want < 1 s", d)
	}
	c.Conn.Close()
	streamtest.Eventually(t, 10*time.Second, func() bool { return e.Srv.Sessions() == 0 },
		func() string { return "the session outlived its socket by 10 s" })
	t.Logf("slot freed %v after the socket closed", time.Since(start).Round(time.Millisecond))
	c2 := e.Dial(t, streamtest.Paused)
	c2.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
}

// TestProtocolEdges is issue #16's protocol edges: a reading client that
// sends 100 commands back to back gets 100 answers (not 1008); a text
// message that is not UTF-8 closes the session with 1007; close reasons
// are cut at a character boundary.
func TestProtocolEdges(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	c.Until("frame", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	// Sent from another goroutine while this one reads, as a browser
	// would: 400 commands, each answered and each followed by a frame.
	const n = 400
	go func() {
		for i := 0; i < n; i++ {
			b, _ := json.Marshal(map[string]any{"id": 1000 + i, "op": "speed", "speed": 10 + i})
			if c.Conn.WriteMessage(websocket.TextMessage, b) != nil {
				return
			}
		}
	}()
	answered := 0
	c.Until(fmt.Sprint(n, " answers"), 30*time.Second, func(m streamtest.Msg) bool {
		if m.Type() == "ack" || m.Type() == "error" {
			answered++
		}
		return answered == n
	})

	c2 := e.Dial(t, streamtest.Paused)
	c2.Until("frame", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	if err := c2.Conn.WriteMessage(websocket.TextMessage, []byte{'{', 0xff, 0xfe, '}'}); err != nil {
		t.Fatal(err)
	}
	c2.Conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, _, err := c2.Conn.ReadMessage()
		if err == nil {
			continue
		}
		if !websocket.IsCloseError(err, websocket.CloseInvalidFramePayloadData) {
			t.Errorf("invalid UTF-8: %v, want close 1007", err)
		}
		break
	}

	long := strings.Repeat("é", 100) // 200 bytes of 2-byte characters
	for _, n := range []int{120, 121, 123} {
		if got := wire.Cut(long, n); !utf8.ValidString(got) || len(got) > n {
			t.Errorf("wire.Cut(%d): %q (%d bytes), not valid UTF-8 within the limit", n, got, len(got))
		}
	}
}
