package stream

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/train"

	"github.com/gorilla/websocket"
)

// dialAs opens a session as the client that names address in
// X-Forwarded-For (the test server trusts it).
func dialAs(t testing.TB, e *testEnv, address, query string) *streamtest.Client {
	t.Helper()
	h := http.Header{}
	h.Set("X-Forwarded-For", address)
	c, resp, err := websocket.DefaultDialer.Dial(e.URL+"?"+query, h)
	if err != nil {
		t.Fatalf("dial: %v (response %v)", err, resp)
	}
	t.Cleanup(func() { c.Close() })
	return streamtest.NewClient(t, c)
}

// closedWith reads c until the server closes it and returns the close.
func closedWith(t testing.TB, c *streamtest.Client) *websocket.CloseError {
	t.Helper()
	for {
		if _, err := c.Read(10 * time.Second); err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) {
				t.Fatalf("ended with %v, want a close frame", err)
			}
			return ce
		}
	}
}

// TestSessionsPerClient: a client gets MaxSessionsPerClient sessions and
// a 1013 past that; another client is admitted meanwhile; the loopback
// range is one client.
func TestSessionsPerClient(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.Limits.MaxSessionsPerClient = 2
		o.TrustProxy = true
	})
	for range 2 {
		c := dialAs(t, e, "192.0.2.1", streamtest.Paused)
		c.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	}
	third := dialAs(t, e, "192.0.2.1", streamtest.Paused)
	if ce := closedWith(t, third); ce.Code != websocket.CloseTryAgainLater || !strings.Contains(ce.Text, "too many sessions from your address (limit 2)") {
		t.Errorf("third session of a client: %d %q", ce.Code, ce.Text)
	}
	other := dialAs(t, e, "192.0.2.2", streamtest.Paused)
	other.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })

	lo := newEnv(t, func(o *Options) { o.Limits.MaxSessionsPerClient = 1 })
	a := lo.Dial(t, streamtest.Paused) // 127.0.0.1
	a.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	from2 := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	b, _, err := (&websocket.Dialer{NetDialContext: from2.DialContext}).Dial(lo.URL+"?"+streamtest.Paused, nil)
	if err != nil {
		t.Skipf("cannot connect from 127.0.0.2 here: %v", err)
	}
	defer b.Close()
	if ce := closedWith(t, streamtest.NewClient(t, b)); ce.Code != websocket.CloseTryAgainLater {
		t.Errorf("a second loopback address: %d %q, want the same client refused", ce.Code, ce.Text)
	}
}

// TestAddDataBudget: data edits are held to the budgets before the memory
// is taken — the hardening campaign's add_data growth of a small model
// into one the budgets refuse is stopped with the budget's error, and the
// server's reservation follows the data (up with added points, down with
// undo).
func TestAddDataBudget(t *testing.T) {
	big := admit.Config{Hidden: []int{8, 8, 8, 8, 8}, Inducing: 64}
	at := func(n int) int64 { return admit.EstimateConfig(big, n, 1, 1).Bytes }
	e := newEnv(t, func(o *Options) { o.Limits.SessionMemory = at(36) })
	c := e.Dial(t, "play=0&hidden=8,8,8,8,8&m=64")
	c.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	reserved := func() int64 {
		e.Srv.mu.Lock()
		defer e.Srv.mu.Unlock()
		return e.Srv.ledger.ClientHeld("loopback", nil)
	}
	before := reserved()
	var refused string
	for k := range 20 {
		id := c.Send(map[string]any{"op": "add_data", "x": []float64{float64(k) / 10}, "y": []float64{0}})
		if r := c.Reply(id); r["type"] == "error" {
			refused, _ = r["error"].(string)
			break
		}
	}
	if !strings.Contains(refused, "more than a session may use") {
		t.Fatalf("add_data past the session budget: %q, want the budget's refusal", refused)
	}
	grown := reserved()
	if grown <= before {
		t.Errorf("reservation %d MiB after adding points, %d MiB before: it should grow", grown>>20, before>>20)
	}
	c.Ack(map[string]any{"op": "undo"})
	if r := reserved(); r >= grown {
		t.Errorf("reservation %d MiB after an undo, %d MiB before it: it should shrink", r>>20, grown>>20)
	}
}

// TestParkedState: uploads and forks are rate-limited per client; a
// client keeps at most admit.MaxParkedPerClient pieces of parked state; and a
// page that is here is admitted by letting go of parked state, the
// heaviest client's first, when the memory budget is full.
func TestParkedState(t *testing.T) {
	step := admit.EstimateConfig(admit.Config{Hidden: []int{1, 1}, Inducing: 12}, 30, 1, 1).Bytes
	e := newEnv(t, func(o *Options) {
		o.Limits.ServerMemory = 4*step + step/2 // room for four step demos
		o.ResumeGrace = time.Hour
	})
	// The rate: admit.ParkBurst, then refused.
	for k := range admit.ParkBurst {
		u, err := e.Srv.BeginUpload("192.0.2.9", 1<<10)
		if err != nil {
			t.Fatalf("upload %d: %v", k+1, err)
		}
		u.End()
	}
	if _, err := e.Srv.BeginUpload("192.0.2.9", 1<<10); !errors.Is(err, admit.ErrTooOften) || !strings.Contains(err.Error(), "try again in") {
		t.Fatalf("upload %d: %v, want too often, saying when", admit.ParkBurst+1, err)
	}
	if u, err := e.Srv.BeginUpload("192.0.2.10", 1<<10); err != nil {
		t.Fatalf("another client's upload: %v", err)
	} else {
		u.End()
	}

	// A flood fills the budget with parked uploads.
	ds := func() *dataset.Dataset {
		d, err := dataset.ReadCSV(strings.NewReader(streamtest.SquaresCSV), "flood", dataset.CSVOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// (ParkData itself spends no allowance: BeginUpload does.) Each new
	// upload past the budget or the client's bound lets go of the flood's
	// own oldest.
	var tokens []string
	for range 3 * admit.MaxParkedPerClient {
		token, _, err := e.Srv.ParkData("flood", ds())
		if err != nil {
			t.Fatalf("upload %d: %v", len(tokens)+1, err)
		}
		tokens = append(tokens, token)
	}
	if n := e.Srv.Parked(); n == 0 || n > admit.MaxParkedPerClient {
		t.Fatalf("%d pieces of parked state, want 1…%d", n, admit.MaxParkedPerClient)
	}
	// A page is admitted: parked state is let go for it.
	c := e.Dial(t, streamtest.Paused)
	c.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	// The flood's oldest upload was let go, not its newest.
	if r := e.Dial(t, "resume="+tokens[0]); r != nil {
		m := r.Until("resume error", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "error" || m.Type() == "frame" })
		if m.Type() != "error" {
			t.Errorf("the flood's oldest upload still resumes")
		}
	}
}

// TestClientMemoryShare: one client may hold half the server's memory
// budget (and at least a session's); past that its next model is refused
// while another client's is admitted.
func TestClientMemoryShare(t *testing.T) {
	step := admit.EstimateConfig(admit.Config{Hidden: []int{1, 1}, Inducing: 12}, 30, 1, 1).Bytes
	e := newEnv(t, func(o *Options) {
		o.Limits.ServerMemory = 4*step + step/2 // a client's share: two step demos
		o.Limits.SessionMemory = step + step/2
		o.TrustProxy = true
	})
	for range 2 {
		c := dialAs(t, e, "192.0.2.1", streamtest.Paused)
		c.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	}
	third := dialAs(t, e, "192.0.2.1", streamtest.Paused)
	m := third.Until("connect error", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "error" })
	if s, _ := m.Text["error"].(string); !strings.Contains(s, "one client may use") {
		t.Errorf("a client past its share: %q", s)
	}
	other := dialAs(t, e, "192.0.2.2", streamtest.Paused)
	other.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
}

// TestBuildEndsWithItsClient: a client that leaves while its preset's
// restarts run (the latent explorer's, here on synthetic data) does not
// pay for the rest of the build: its job in the pool ends at once and the
// iterations stop.
func TestBuildEndsWithItsClient(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		if err := o.Catalog.Add(streamtest.WideData(400, 40), o.Limits.MaxRows); err != nil {
			t.Fatal(err)
		}
	})
	c := e.Dial(t, "data=wide&play=0") // the hello comes once the model is built: no waiting for it
	streamtest.Eventually(t, 30*time.Second, func() bool { return e.Srv.pool.Stats().Turns >= 5 },
		func() string { return "the build took no turns" })
	c.Conn.Close()
	streamtest.Eventually(t, 10*time.Second, func() bool { return e.Srv.Sessions() == 0 && e.Srv.pool.Stats().Clients <= 1 },
		func() string { return "the session or its build outlived its client" })
	left := e.Srv.pool.Stats().Turns
	time.Sleep(200 * time.Millisecond)
	if after := e.Srv.pool.Stats().Turns; after != left {
		t.Errorf("the build took %d more turns after its client left", after-left)
	}
	// The explorer's preset: its restarts' iterations, about a turn each
	// (and the baseline's fit, the server's own, may take turns too).
	full := int64(train.RobotRestarts * train.RobotRestartIters)
	if left >= full {
		t.Logf("the build finished before the client left (%d turns): nothing to cancel on this machine", left)
	} else {
		t.Logf("the build stopped after %d turns of about %d", left, full)
	}
}
