package stream

import (
	"os"
	"strconv"
	"testing"
	"time"

	"dgpviz/internal/stream/streamtest"
)

// TestFirstFrameAtScale measures, behind DGPVIZ_FIRST_FRAME_ROWS (a number
// of rows), how long a session on a robot-shaped data set of that many
// rows and 30 outputs takes to its setup, its first frame and its first
// frames after 1 and 10 iterations, and the iterations of its first 30 s
// (docs/measurements.md, "Stochastic fits on the live page").
// DGPVIZ_FIRST_FRAME_OPT names the optimizer asked for (default lbfgs).
func TestFirstFrameAtScale(t *testing.T) {
	rows, _ := strconv.Atoi(os.Getenv("DGPVIZ_FIRST_FRAME_ROWS"))
	if rows <= 0 {
		t.Skip("a measurement: set DGPVIZ_FIRST_FRAME_ROWS to a number of rows")
	}
	opt := os.Getenv("DGPVIZ_FIRST_FRAME_OPT")
	if opt == "" {
		opt = "lbfgs"
	}
	t0 := time.Now()
	ds := streamtest.WideData(rows, 30)
	t.Logf("%d rows made in %v", rows, time.Since(t0).Round(time.Millisecond))
	e := newEnv(t, func(o *Options) {
		o.Limits.MaxRows, o.Limits.SessionMemory, o.Limits.ServerMemory, o.Limits.MaxIterTime = rows, 0, 0, 0
		o.Workers = 2
		if err := o.Catalog.Add(ds, o.Limits.MaxRows); err != nil {
			t.Fatal(err)
		}
	})
	t0 = time.Now()
	c := e.Dial(t, "data=wide&hidden=3,3&m=15&speed=0&opt="+opt)
	c.Until("the setup", 10*time.Minute, func(m streamtest.Msg) bool { return m.Type() == "setup" })
	t.Logf("setup after %v", time.Since(t0).Round(time.Millisecond))
	var first, one, ten time.Duration
	iter, method := 0, ""
	end := 30 * time.Second
	c.Until("30 s of frames", 10*time.Minute, func(m streamtest.Msg) bool {
		if m.Type() != "frame" {
			return false
		}
		d := time.Since(t0)
		iter, method = int(streamtest.Num(streamtest.Get(m.Frame, "iter"))), streamtest.Get(m.Frame, "optimizer", "method").(string)
		if first == 0 {
			first = d
			end += d
		}
		if one == 0 && iter >= 1 {
			one = d
		}
		if ten == 0 && iter >= 10 {
			ten = d
		}
		return d >= end
	})
	t.Logf("%s (asked: %s): first frame after %v, iteration ≥ 1 after %v, ≥ 10 after %v; iteration %d 30 s after the first frame",
		method, opt, first.Round(time.Millisecond), one.Round(time.Millisecond), ten.Round(time.Millisecond), iter)
}
