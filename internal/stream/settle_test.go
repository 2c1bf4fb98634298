package stream

import (
	"testing"
	"time"

	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/train"
)

// TestFastUntilSettled: a session runs fast (as fast as it can, frames say
// "fast") from the start, and at its speed once the bound has settled:
// the step demo gets within 0.1 nats of its settled bound in a few hundred
// milliseconds' worth of iterations, not the 15 s that 60 iterations a
// second need.
func TestFastUntilSettled(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, "play=1&speed=60")
	start := time.Now()
	f := c.Until("a fast frame", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" && m.Frame["running"] == true })
	if streamtest.Get(f.Frame, "optimizer", "fast") != true {
		t.Errorf("the first running frame is not fast: %v", streamtest.Get(f.Frame, "optimizer"))
	}
	f = c.Until("the settled bound", 120*time.Second, func(m streamtest.Msg) bool {
		return m.Type() == "frame" && m.Frame["running"] == true && streamtest.Get(m.Frame, "optimizer", "fast") == false
	})
	t.Logf("settled at iteration %v, bound %.3f, after %v", f.Frame["iter"], streamtest.Num(f.Frame["bound"]), time.Since(start).Round(time.Millisecond))
	if it := streamtest.Num(f.Frame["iter"]); it < train.SettleWindow {
		t.Errorf("settled at iteration %v, before a whole window", it)
	}
	// At its speed now: about 60 iterations a second.
	i0, t0 := streamtest.Num(f.Frame["iter"]), time.Now()
	time.Sleep(time.Second)
	f = c.Until("a later frame", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	rate := (streamtest.Num(f.Frame["iter"]) - i0) / time.Since(t0).Seconds()
	if streamtest.Get(f.Frame, "optimizer", "fast") == false && rate > 120 {
		t.Errorf("%.0f iterations a second once settled, want about 60", rate)
	}
}
