package stream

import (
	"testing"
	"time"

	"dgpviz/internal/train"
)

// TestFastUntilSettled: a session runs fast (as fast as it can, frames say
// "fast") from the start, and at its speed once the bound has settled:
// the step demo gets within 0.1 nats of its settled bound in a few hundred
// milliseconds' worth of iterations, not the 15 s that 60 iterations a
// second need.
func TestFastUntilSettled(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, "play=1&speed=60")
	start := time.Now()
	f := c.until("a fast frame", 10*time.Second, func(m msg) bool { return m.typ() == "frame" && m.frame["running"] == true })
	if get(f.frame, "optimizer", "fast") != true {
		t.Errorf("the first running frame is not fast: %v", get(f.frame, "optimizer"))
	}
	f = c.until("the settled bound", 120*time.Second, func(m msg) bool {
		return m.typ() == "frame" && m.frame["running"] == true && get(m.frame, "optimizer", "fast") == false
	})
	t.Logf("settled at iteration %v, bound %.3f, after %v", f.frame["iter"], num64(f.frame["bound"]), time.Since(start).Round(time.Millisecond))
	if it := num64(f.frame["iter"]); it < train.SettleWindow {
		t.Errorf("settled at iteration %v, before a whole window", it)
	}
	// At its speed now: about 60 iterations a second.
	i0, t0 := num64(f.frame["iter"]), time.Now()
	time.Sleep(time.Second)
	f = c.until("a later frame", 10*time.Second, func(m msg) bool { return m.typ() == "frame" })
	rate := (num64(f.frame["iter"]) - i0) / time.Since(t0).Seconds()
	if get(f.frame, "optimizer", "fast") == false && rate > 120 {
		t.Errorf("%.0f iterations a second once settled, want about 60", rate)
	}
}
