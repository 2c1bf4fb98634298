package stream

import (
	"testing"
	"time"
)

// TestSettler: the bound settles when it rose by less than settleNats over
// the last settleWindow iterations, unsettles when it rises unsettleBy
// times faster, and a reset (an edit) starts afresh.
func TestSettler(t *testing.T) {
	var s settler
	s.reset()
	it := 0
	run := func(n int, perIter float64, b *float64) {
		for k := 0; k < n; k++ {
			it++
			*b += perIter
			s.add(it, *b)
		}
	}
	b := -100.0
	run(300, 0.5, &b) // a fit under way: 50 nats per window
	if s.settled {
		t.Fatal("settled while the bound rises 50 nats per window")
	}
	run(settleWindow-1, 0.0001, &b) // 0.01 per window, but the window still holds the rise
	if s.settled {
		t.Fatal("settled before a whole window of slow iterations")
	}
	run(2, 0.0001, &b)
	if !s.settled {
		t.Fatal("not settled after a window of 0.01 nats")
	}
	run(50, 0.002, &b) // 0.2 per window: below the unsettling rise (4 × 0.05)
	if !s.settled {
		t.Fatal("unsettled by a rise below the hysteresis")
	}
	run(150, 0.01, &b) // 1 nat per window
	if s.settled {
		t.Fatal("still settled while the bound rises 1 nat per window")
	}
	s.reset()
	if s.settled {
		t.Fatal("settled after a reset")
	}
	// a large bound settles at a proportionally larger rise
	b = -50000
	run(2*settleWindow+1, 0.004, &b) // 0.4 nats per window < 0.05·(1 + 10)
	if !s.settled {
		t.Fatal("a bound of −50000 rising 0.4 nats per window is not settled")
	}
}

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
	if it := num64(f.frame["iter"]); it < settleWindow {
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
