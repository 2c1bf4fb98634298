package stream

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/allviews"
	"dgpviz/internal/dataset"
	"dgpviz/internal/stream/streamtest"

	"github.com/gorilla/websocket"
)

// TestServerBudgets: a configuration past the per-session budget is
// refused at connect with an error saying so; the server-wide budget turns
// away a session that would exceed it (an error naming memory, the socket
// closed) and admits one again once another session closes.
func TestServerBudgets(t *testing.T) {
	step := admit.EstimateConfig(admit.Config{Hidden: []int{1, 1}, Inducing: 12}, 30, 1, 1).Bytes
	e := newEnv(t, func(o *Options) {
		o.Limits.SessionMemory = 64 << 20
		o.Limits.ServerMemory = 2*step + step/2 // room for two step demos
		o.ResumeGrace = 200 * time.Millisecond  // a closed session keeps its memory only so long
	})
	tooBig := e.Dial(t, streamtest.Paused+"&hidden=8,8,8,8,8&m=64")
	m := tooBig.Until("connect error", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "error" })
	if s, _ := m.Text["error"].(string); !strings.Contains(s, "more than a session may use") {
		t.Errorf("too big a model: %q, want an error about memory", s)
	}
	a := e.Dial(t, streamtest.Paused)
	a.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	b := e.Dial(t, streamtest.Paused)
	b.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	c := e.Dial(t, streamtest.Paused)
	m = c.Until("connect error", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "error" })
	if s, _ := m.Text["error"].(string); !strings.Contains(s, "server is busy") {
		t.Errorf("third session: %q, want the server's memory budget", s)
	}
	a.Conn.Close()
	streamtest.Eventually(t, 10*time.Second, func() bool { return e.Srv.Sessions() <= 1 && e.Srv.Parked() == 0 },
		func() string { return "the closed session kept its place" })
	d := e.Dial(t, streamtest.Paused)
	d.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
}

// TestBusyMakesRoomFromDisconnected: with the memory budget full, a new
// page is admitted by letting go the state of the session that disconnected
// first (whose token then starts afresh, saying why), never a connected
// session's; with no disconnected state to let go, the refusal is a 1013
// "try again later" whose reason fits a close frame.
func TestBusyMakesRoomFromDisconnected(t *testing.T) {
	step := admit.EstimateConfig(admit.Config{Hidden: []int{1, 1}, Inducing: 12}, 30, 1, 1).Bytes
	e := newEnv(t, func(o *Options) {
		o.Limits.ServerMemory = 2*step + step/2 // room for two step demos
		o.ResumeGrace = time.Hour               // parked state would otherwise hold its place
	})
	a := e.Dial(t, streamtest.Paused)
	token, _ := a.Until("hello", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "hello" }).Text["resume"].(string)
	a.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	b := e.Dial(t, streamtest.Paused)
	b.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	a.Conn.Close()
	streamtest.Eventually(t, 10*time.Second, func() bool { return e.Srv.Parked() == 1 },
		func() string { return "the closed session was not parked" })
	c := e.Dial(t, streamtest.Paused)
	c.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	if n := e.Srv.Parked(); n != 0 {
		t.Errorf("%d sessions still parked; the disconnected one should have made room", n)
	}
	// The connected sessions are left alone: a fourth page is refused.
	d := e.Dial(t, streamtest.Paused)
	m := d.Until("connect error", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "error" })
	if s, _ := m.Text["error"].(string); !strings.Contains(s, "server is busy") || !strings.Contains(s, "MiB") {
		t.Errorf("fourth session: %q, want the memory numbers", s)
	}
	var ce *websocket.CloseError
	for {
		if _, err := d.Read(10 * time.Second); err != nil {
			if !errors.As(err, &ce) {
				t.Fatalf("fourth session ended with %v, want a close frame", err)
			}
			break
		}
	}
	if ce.Code != websocket.CloseTryAgainLater || ce.Text != busyCloseText {
		t.Errorf("fourth session closed %d %q, want 1013 %q", ce.Code, ce.Text, busyCloseText)
	}
	// b is still there and steps.
	b.FrameAfter(b.Ack(map[string]any{"op": "step", "n": 1}))
	// The evicted token starts a new session, saying why — once there is room.
	c.Conn.Close()
	b.Conn.Close()
	r := e.Dial(t, streamtest.Paused+"&resume="+token)
	m = r.Until("resume error", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "error" })
	if s, _ := m.Text["error"].(string); !strings.Contains(s, "could not be resumed") {
		t.Errorf("the evicted token: %q", s)
	}
}

// TestUploadChoosesModelWithinBudget: 300 images of 28×20 (560 columns,
// the Frey faces' shape) open with the default limits: the preset's model
// is over the session's memory, so the upload takes the most inducing
// points that fit, and says so in its reply.
func TestUploadChoosesModelWithinBudget(t *testing.T) {
	e := newEnv(t, nil)
	ds := streamtest.ViaCSV(t, streamtest.BlobImages(300, 28, 20), dataset.CSVOptions{Shape: [2]int{28, 20}})
	n, q := ds.X.Dims()
	_, d := ds.Y.Dims()
	l := e.Srv.limits
	preset := admit.WithPreset(e.Srv.def, allviews.For(ds, nil), e.Srv.def, l)
	if admit.CheckBudget(admit.EstimateSession(preset, ds, n, q, d), l) == nil {
		t.Fatalf("the preset's %d inducing points fit the budget: nothing to choose", preset.Inducing)
	}
	token, note, err := e.Srv.ParkData("test", ds)
	if err != nil {
		t.Fatalf("300 images of 560 pixels refused: %v", err)
	}
	var k int
	if _, err := fmt.Sscanf(note, "%d inducing points per layer instead of", &k); err != nil || !strings.Contains(note, "-session-memory") {
		t.Fatalf("reply note %q: want the inducing points chosen and the flag that raises the limit", note)
	}
	within := func(k int) bool {
		c := preset
		c.Inducing = k
		return admit.CheckBudget(admit.EstimateSession(c, ds, n, q, d), l) == nil
	}
	if !within(k) || within(k+1) || k >= preset.Inducing {
		t.Errorf("%d inducing points chosen of the preset's %d: want the most within the budget", k, preset.Inducing)
	}
	t.Logf("reply: %s", note)
	if testing.Short() {
		return
	}
	c := e.Dial(t, "resume="+token)
	c.Until("a frame", 120*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
}
