package stream

import (
	"dgpviz/internal/allviews"
	"dgpviz/internal/dataset"
	"dgpviz/internal/train"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestBudgets: the step demo and the robot preset are cheap and admitted;
// the configuration that took 457 MB and ran at 3 iterations a second in
// the hardening campaign (2,000 rows, hidden 8,8,8,8,8, 64 inducing
// points) is refused by the default budgets with an error that says what
// to reduce; sixteen step demos fit in the server's budget.
func TestBudgets(t *testing.T) {
	l := DefaultLimits()
	step := EstimateConfig(Config{Hidden: []int{1, 1}, Inducing: 12}, 30, 1, 1)
	robot := EstimateConfig(Config{Hidden: []int{3, 3}, Inducing: 20}, 215, 1, 30)
	big := Config{Hidden: []int{8, 8, 8, 8, 8}, Inducing: 64}
	bigE := EstimateConfig(big, 2000, 1, 1)
	t.Logf("step demo %s, %v per iteration; robot preset %s, %v; the campaign's model %s, %v",
		mib(step.Bytes), step.IterTime, mib(robot.Bytes), robot.IterTime, mib(bigE.Bytes), bigE.IterTime)
	if step.Bytes > 16<<20 || step.IterTime > 10*time.Millisecond {
		t.Errorf("the step demo is estimated at %s and %v per iteration", mib(step.Bytes), step.IterTime)
	}
	if robot.Bytes > 64<<20 || robot.IterTime > 50*time.Millisecond {
		t.Errorf("the robot preset is estimated at %s and %v per iteration", mib(robot.Bytes), robot.IterTime)
	}
	if 16*step.Bytes > l.ServerMemory {
		t.Errorf("16 step demos (%s) exceed the server budget %s", mib(16*step.Bytes), mib(l.ServerMemory))
	}
	// Measured 457 MB (RSS) and 0.33 s per iteration: the estimate must
	// be of that order, and the defaults refuse it.
	if bigE.Bytes < 200<<20 || bigE.IterTime < 100*time.Millisecond {
		t.Errorf("the campaign's model is estimated at only %s and %v", mib(bigE.Bytes), bigE.IterTime)
	}
	err := checkBudget(bigE, l)
	if err == nil || !strings.Contains(err.Error(), "fewer inducing points") || !strings.Contains(err.Error(), "(the server's -session-memory raises the limit)") {
		t.Fatalf("the campaign's model: %v, want a refusal saying what to reduce and which flag raises the limit", err)
	}
	if err := checkBudget(bigE, Limits{}); err != nil {
		t.Errorf("zero budgets (none) refused: %v", err)
	}
}

// TestServerBudgets: a configuration past the per-session budget is
// refused at connect with an error saying so; the server-wide budget turns
// away a session that would exceed it (an error naming memory, the socket
// closed) and admits one again once another session closes.
func TestServerBudgets(t *testing.T) {
	step := EstimateConfig(Config{Hidden: []int{1, 1}, Inducing: 12}, 30, 1, 1).Bytes
	e := newEnv(t, func(o *Options) {
		o.Limits.SessionMemory = 64 << 20
		o.Limits.ServerMemory = 2*step + step/2 // room for two step demos
		o.ResumeGrace = 200 * time.Millisecond  // a closed session keeps its memory only so long
	})
	tooBig := e.dial(t, paused+"&hidden=8,8,8,8,8&m=64")
	m := tooBig.until("connect error", 10*time.Second, func(m msg) bool { return m.typ() == "error" })
	if s, _ := m.text["error"].(string); !strings.Contains(s, "more than a session may use") {
		t.Errorf("too big a model: %q, want an error about memory", s)
	}
	a := e.dial(t, paused)
	a.until("frame", 30*time.Second, func(m msg) bool { return m.typ() == "frame" })
	b := e.dial(t, paused)
	b.until("frame", 30*time.Second, func(m msg) bool { return m.typ() == "frame" })
	c := e.dial(t, paused)
	m = c.until("connect error", 10*time.Second, func(m msg) bool { return m.typ() == "error" })
	if s, _ := m.text["error"].(string); !strings.Contains(s, "server is busy") {
		t.Errorf("third session: %q, want the server's memory budget", s)
	}
	a.c.Close()
	eventually(t, 10*time.Second, func() bool { return e.srv.Sessions() <= 1 && e.srv.Parked() == 0 },
		func() string { return "the closed session kept its place" })
	d := e.dial(t, paused)
	d.until("frame", 30*time.Second, func(m msg) bool { return m.typ() == "frame" })
}

// TestBusyMakesRoomFromDisconnected: with the memory budget full, a new
// page is admitted by letting go the state of the session that disconnected
// first (whose token then starts afresh, saying why), never a connected
// session's; with no disconnected state to let go, the refusal is a 1013
// "try again later" whose reason fits a close frame.
func TestBusyMakesRoomFromDisconnected(t *testing.T) {
	step := EstimateConfig(Config{Hidden: []int{1, 1}, Inducing: 12}, 30, 1, 1).Bytes
	e := newEnv(t, func(o *Options) {
		o.Limits.ServerMemory = 2*step + step/2 // room for two step demos
		o.ResumeGrace = time.Hour               // parked state would otherwise hold its place
	})
	a := e.dial(t, paused)
	token, _ := a.until("hello", 5*time.Second, func(m msg) bool { return m.typ() == "hello" }).text["resume"].(string)
	a.until("frame", 30*time.Second, func(m msg) bool { return m.typ() == "frame" })
	b := e.dial(t, paused)
	b.until("frame", 30*time.Second, func(m msg) bool { return m.typ() == "frame" })
	a.c.Close()
	eventually(t, 10*time.Second, func() bool { return e.srv.Parked() == 1 },
		func() string { return "the closed session was not parked" })
	c := e.dial(t, paused)
	c.until("frame", 30*time.Second, func(m msg) bool { return m.typ() == "frame" })
	if n := e.srv.Parked(); n != 0 {
		t.Errorf("%d sessions still parked; the disconnected one should have made room", n)
	}
	// The connected sessions are left alone: a fourth page is refused.
	d := e.dial(t, paused)
	m := d.until("connect error", 10*time.Second, func(m msg) bool { return m.typ() == "error" })
	if s, _ := m.text["error"].(string); !strings.Contains(s, "server is busy") || !strings.Contains(s, "MiB") {
		t.Errorf("fourth session: %q, want the memory numbers", s)
	}
	var ce *websocket.CloseError
	for {
		if _, err := d.read(10 * time.Second); err != nil {
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
	b.frameAfter(b.ack(map[string]any{"op": "step", "n": 1}))
	// The evicted token starts a new session, saying why — once there is room.
	c.c.Close()
	b.c.Close()
	r := e.dial(t, paused+"&resume="+token)
	m = r.until("resume error", 10*time.Second, func(m msg) bool { return m.typ() == "error" })
	if s, _ := m.text["error"].(string); !strings.Contains(s, "could not be resumed") {
		t.Errorf("the evicted token: %q", s)
	}
}

// TestEstimateStochasticStep: above train.StochasticRows a session's
// default method is SVI, whose iteration evaluates a minibatch, so its
// iteration time is a minibatch's (the 100,000-row walk was refused with
// a full pass's); Adam, asked for, evaluates every row.
func TestEstimateStochasticStep(t *testing.T) {
	c := DefaultConfig()
	c.Hidden, c.Inducing = []int{3, 3}, 15
	const n = 100000
	svi := EstimateConfig(c, n, 1, 30)
	c.Method = train.Adam{}
	full := EstimateConfig(c, n, 1, 30)
	if svi.IterTime*20 > full.IterTime {
		t.Errorf("an SVI step of %d rows is estimated at %v, a full pass at %v: want the minibatch's (1/%d of the rows)", n, svi.IterTime, full.IterTime, n/train.DefaultStochasticBatch)
	}
	if l := DefaultLimits(); svi.IterTime > l.MaxIterTime {
		t.Errorf("an SVI step of %d rows is estimated at %v, more than the default limit %v", n, svi.IterTime, l.MaxIterTime)
	}
}

// TestUploadChoosesModelWithinBudget: 300 images of 28×20 (560 columns,
// the Frey faces' shape) open with the default limits: the preset's model
// is over the session's memory, so the upload takes the most inducing
// points that fit, and says so in its reply.
func TestUploadChoosesModelWithinBudget(t *testing.T) {
	e := newEnv(t, nil)
	ds := csvData(t, blobImages(300, 28, 20), dataset.CSVOptions{Shape: [2]int{28, 20}})
	n, q := ds.X.Dims()
	_, d := ds.Y.Dims()
	l := e.srv.limits
	preset := presetConfig(e.srv.def, allviews.For(ds, nil), e.srv.def, l)
	if checkBudget(EstimateSession(preset, ds, n, q, d), l) == nil {
		t.Fatalf("the preset's %d inducing points fit the budget: nothing to choose", preset.Inducing)
	}
	token, note, err := e.srv.ParkData("test", ds)
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
		return checkBudget(EstimateSession(c, ds, n, q, d), l) == nil
	}
	if !within(k) || within(k+1) || k >= preset.Inducing {
		t.Errorf("%d inducing points chosen of the preset's %d: want the most within the budget", k, preset.Inducing)
	}
	t.Logf("reply: %s", note)
	if testing.Short() {
		return
	}
	c := e.dial(t, "resume="+token)
	c.until("a frame", 120*time.Second, func(m msg) bool { return m.typ() == "frame" })
}
