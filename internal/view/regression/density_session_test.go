package regression_test

import (
	"strings"
	"testing"
	"time"

	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/view/regression"
)

// TestFitDensity: a fit_density command is acknowledged at once and its
// density follows as a binary message — 100 inputs × 80 bins, each column
// a density integrating to about 1, with a mode count per input — for the
// model as it was when asked; bad samples and a second request while one
// is computed get errors, and the session carries on.
func TestFitDensity(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	c.FrameAfter(c.Ack(map[string]any{"op": "step", "n": 10}))
	id := c.Ack(map[string]any{"op": "fit_density", "samples": 400})
	m := c.Until("fit_density", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "fit_density" }).Frame
	if int64(streamtest.Num(m["applied"])) != id || streamtest.Num(m["iter"]) != 10 {
		t.Errorf("density for command %v at iteration %v, want %d at 10", m["applied"], m["iter"], id)
	}
	if e, ok := m["error"].(string); ok && e != "" {
		t.Fatalf("density error: %s", e)
	}
	g, b := int(streamtest.Num(m["g"])), int(streamtest.Num(m["b"]))
	dens, edges, modes := streamtest.Floats(m["density"]), streamtest.Floats(m["edges"]), streamtest.Floats(m["modes"])
	if g != regression.DensityGrid || b != regression.DensityBins || len(dens) != g*b || len(edges) != b+1 || len(modes) != g {
		t.Fatalf("g %d b %d, %d densities, %d edges, %d modes", g, b, len(dens), len(edges), len(modes))
	}
	w := edges[1] - edges[0]
	for i := 0; i < g; i += 33 {
		var mass float64
		for k := range b {
			mass += dens[i*b+k] * w
		}
		// The bins span the samples' 0.5–99.5 % range padded by 5 %:
		// nearly every sample falls inside (q16 quantisation: 1e-4).
		if mass < 0.9 || mass > 1.01 {
			t.Errorf("input %d: the density integrates to %v", i, mass)
		}
	}
	for _, tc := range []struct {
		cmd  map[string]any
		want string
	}{
		{map[string]any{"op": "fit_density", "samples": 5}, "out of range"},
		{map[string]any{"op": "fit_density", "samples": 1e9}, "out of range"},
	} {
		r := c.Reply(c.Send(tc.cmd))
		if s, _ := r["error"].(string); r["type"] != "error" || !strings.Contains(s, tc.want) {
			t.Errorf("%v: %v, want an error containing %q", tc.cmd, r, tc.want)
		}
	}
	// Two at once: the second is refused while the first is computed.
	c.Send(map[string]any{"op": "fit_density", "samples": 5000})
	r := c.Reply(c.Send(map[string]any{"op": "fit_density", "samples": 100}))
	if s, _ := r["error"].(string); r["type"] != "error" || !strings.Contains(s, "still running") {
		t.Logf("a second request was not refused (the first may have finished already): %v", r)
	}
	c.Ack(map[string]any{"op": "speed", "speed": 30})
}
