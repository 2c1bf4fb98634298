package stream

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/modelfile"
	"dgpviz/internal/stream/streamtest"

	"gonum.org/v1/gonum/mat"
)

// TestResume: a page that reconnects with its hello's token within the
// grace period gets its session back — the same model (bound to the last
// digit), iteration count and undo history — and the token is single use:
// a second reconnect with it starts a new session with an error saying
// why. A shutdown forgets parked sessions.
func TestResume(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	hello := c.Until("hello", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "hello" }).Text
	token, _ := hello["resume"].(string)
	if len(token) != 32 {
		t.Fatalf("hello's resume token %q", token)
	}
	c.FrameAfter(c.Ack(map[string]any{"op": "step", "n": 20}))
	b0, f0 := boundAfter(t, c, map[string]any{"op": "move", "layer": 0, "index": 3, "z": []float64{0.1}})
	iter0 := streamtest.Num(f0["iter"])
	c.Conn.Close()
	streamtest.Eventually(t, 10*time.Second, func() bool { return e.Srv.Parked() == 1 && e.Srv.Sessions() == 0 },
		func() string {
			return fmt.Sprintf("after the disconnect: %d parked, %d sessions", e.Srv.Parked(), e.Srv.Sessions())
		})

	r := e.Dial(t, streamtest.Paused+"&resume="+token)
	f := r.Until("frame", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" }).Frame
	if b := streamtest.Num(f["bound"]); b != b0 || streamtest.Num(f["iter"]) != iter0 {
		t.Fatalf("resumed at iteration %v, bound %v; want %v, %v", f["iter"], b, iter0, b0)
	}
	if e.Srv.Parked() != 0 {
		t.Error("the resumed state is still parked")
	}
	// The move is still undoable.
	reply := r.Reply(r.Send(map[string]any{"op": "undo"}))
	if reply["type"] != "ack" {
		t.Fatalf("undo after resuming: %v", reply)
	}

	again := e.Dial(t, streamtest.Paused+"&resume="+token)
	m := again.Until("resume error", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "error" })
	if s, _ := m.Text["error"].(string); !strings.Contains(s, "could not be resumed") {
		t.Errorf("a used token: %q", s)
	}
	f = again.Until("frame", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" }).Frame
	if streamtest.Num(f["iter"]) != 0 {
		t.Errorf("a used token started at iteration %v, want a new session", f["iter"])
	}

	// A shutdown forgets what is parked.
	again.Conn.Close()
	streamtest.Eventually(t, 10*time.Second, func() bool { return e.Srv.Parked() > 0 },
		func() string { return "the second session was not parked" })
	r.Conn.Close()
	if err := e.Srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := e.Srv.Parked(); n != 0 {
		t.Errorf("%d sessions still parked after the shutdown", n)
	}
}

// TestParkModelLimits: a loaded model is held to the server's limits like
// a configuration from the page, with a reason.
func TestParkModelLimits(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Limits.MaxInducing = 4; o.Defaults.Inducing = 4 })
	m := engine.RandomModel(rand.New(rand.NewPCG(1, 1)), 20, []int{1, 1, 1}, []string{"rbf", "rbf"}, 6)
	if _, err := e.Srv.ParkModel("test", &modelfile.File{Model: m}); err == nil || !strings.Contains(err.Error(), "6 inducing points in a layer, more than the limit of 4 inducing points") {
		t.Errorf("6 inducing points past a limit of 4: %v", err)
	}
	small := engine.RandomModel(rand.New(rand.NewPCG(1, 1)), 20, []int{1, 1, 1}, []string{"rbf", "rbf"}, 3)
	token, err := e.Srv.ParkModel("test", &modelfile.File{Model: small})
	if err != nil || e.Srv.Parked() != 1 || len(token) != 32 {
		t.Fatalf("a model within the limits: %q, %v (%d parked)", token, err, e.Srv.Parked())
	}
}

// TestParkModelSource: a loaded model whose file refers to a public data
// set keeps the data set's originals (and its source) when its data are
// them, normalised, and keeps its own otherwise, whatever the data set's
// shape: a file's other array may have any.
func TestParkModelSource(t *testing.T) {
	e := newEnv(t, nil)
	m := engine.RandomModel(rand.New(rand.NewPCG(1, 1)), 20, []int{1, 1, 1}, []string{"rbf", "rbf"}, 3)
	r, _ := dataset.RemoteNamed("robot")
	nz := dataset.Normalizer{Mean: []float64{10}, Scale: []float64{2}}
	// Originals that normalise to the model's data bit for bit, as a
	// file's reference guarantees.
	own := &dataset.Dataset{X: mat.NewDense(20, 1, nil), Y: mat.NewDense(20, 1, nil), Source: &r}
	for i := range 20 {
		own.X.Set(i, 0, float64(i))
		own.Y.Set(i, 0, float64(i%7))
	}
	m.X, m.Y = nz.Apply(own.X), nz.Apply(own.Y)
	wide := &dataset.Dataset{X: mat.NewDense(20, 30, nil), Y: mat.NewDense(20, 30, nil), Source: &r}
	for _, tc := range []struct {
		name string
		src  *dataset.Dataset
		want bool // the parked data set is the source's
	}{{"its data", own, true}, {"another shape", wide, false}} {
		t.Run(tc.name, func(t *testing.T) {
			token, err := e.Srv.ParkModel("test", &modelfile.File{Model: m, NormX: nz, NormY: nz, Data: tc.src})
			if err != nil {
				t.Fatal(err)
			}
			e.Srv.mu.Lock()
			var got *dataset.Dataset
			for t, p := range e.Srv.lot.All() {
				if t == token {
					got = p.data.Set
				}
			}
			e.Srv.mu.Unlock()
			if (got.Source != nil) != tc.want || tc.want && got.X != tc.src.X {
				t.Errorf("parked data set: source %v, want the source's data %v", got.Source, tc.want)
			}
		})
	}
}
