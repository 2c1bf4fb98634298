package stream

import (
	"os"
	"testing"
	"time"

	"dgpviz/internal/stream/streamtest"
)

// TestMeasurePace times what a lecturer waits for on the default demo
// (step data, 3 layers, 60 iterations a second) with the fast phase
// (train.Settler) and without it, the page's pace before it: the time from
// connecting to a bound within 1 nat and within 0.1 nats of the
// optimizer's converged −0.754 (a converged picture), and to the
// optimizer's own convergence. A measurement, not a test: it runs with
// DGPVIZ_MEASURE=pace (docs/measurements.md, "Live pace"), interleaving
// the two, three times each.
func TestMeasurePace(t *testing.T) {
	if os.Getenv("DGPVIZ_MEASURE") != "pace" {
		t.Skip("a measurement: DGPVIZ_MEASURE=pace")
	}
	const final = -0.754 // the step demo's converged bound (function convergence at iteration 8985)
	defer func() { fastUntilSettled = true }()
	for run := 0; run < 3; run++ {
		for _, fast := range []bool{false, true} {
			fastUntilSettled = fast
			e := newEnv(t, nil)
			c := e.Dial(t, "play=1&speed=60")
			start := time.Now()
			var t1, t01, tc time.Duration
			var it1, it01 float64
			limit := 240 * time.Second
			for time.Since(start) < limit && tc == 0 {
				m, err := c.Read(10 * time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if m.Type() != "frame" {
					continue
				}
				b := streamtest.Num(m.Frame["bound"])
				if t1 == 0 && b >= final-1 {
					t1, it1 = time.Since(start), streamtest.Num(m.Frame["iter"])
				}
				if t01 == 0 && b >= final-0.1 {
					t01, it01 = time.Since(start), streamtest.Num(m.Frame["iter"])
				}
				if streamtest.Get(m.Frame, "optimizer", "converged") == true {
					tc = time.Since(start)
				}
				c.Send(map[string]any{"op": "drawn", "seq": m.Frame["seq"]}) // a page that draws every frame
			}
			conv := "not within " + limit.String()
			if tc > 0 {
				conv = tc.Round(100 * time.Millisecond).String()
			}
			t.Logf("fast=%v: within 1 nat %v (iteration %v), within 0.1 nats %v (iteration %v), converged %s",
				fast, t1.Round(10*time.Millisecond), it1, t01.Round(10*time.Millisecond), it01, conv)
			c.Conn.Close()
		}
	}
}
