package regression_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/stream/streamtest"
)

// TestCompareDepths: the comparison fits 1, 2 and 3 layers to the step
// data with restarts (400 iterations each, to keep it short under -race), reports progress, and ends with each depth's bound,
// restarts, curve and rise width; the deep models rise more sharply than
// the one-layer GP (the paper's step figure); a second comparison while
// one runs is refused.
func TestCompareDepths(t *testing.T) {
	if testing.Short() {
		t.Skip("fits 9 models to convergence: not in the short tier")
	}
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	c.Until("frame", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	c.Ack(map[string]any{"op": "compare", "n": 400}) // 400 iterations a restart: enough to tell the depths apart (the README's full fits: 0.137 / 0.026 / 0.021)
	r := c.Reply(c.Send(map[string]any{"op": "compare"}))
	if s, _ := r["error"].(string); !strings.Contains(s, "running") {
		t.Errorf("a second comparison: %v", r)
	}
	var progress int
	final := c.Until("the comparison", 120*time.Second, func(m streamtest.Msg) bool {
		if m.Type() != "compare" {
			return false
		}
		if m.Frame["done"] != true {
			progress++
			return false
		}
		return true
	}).Frame
	t.Logf("%d progress messages", progress)
	depths := final["depths"].([]any)
	if len(depths) != 3 {
		t.Fatalf("%d depths", len(depths))
	}
	g := int(streamtest.Num(final["g"]))
	var rise [3]float64
	for i, dv := range depths {
		d := dv.(map[string]any)
		if d["error"] != nil {
			t.Fatalf("depth %d: %v", i+1, d["error"])
		}
		mean := streamtest.Floats(d["mean"])
		if len(mean) != g || d["bound"] == nil || d["rise"] == nil {
			t.Fatalf("depth %d: %d mean values, bound %v, rise %v", i+1, len(mean), d["bound"], d["rise"])
		}
		rise[i] = streamtest.Num(d["rise"])
		t.Logf("%v layers: bound %.2f, restarts %v, rise %.3f, %v s, %v", d["layers"], streamtest.Num(d["bound"]), d["bounds"], rise[i], d["seconds"], d["status"])
	}
	// The README's numbers: one layer rises over 0.137, the deep GPs over
	// 0.02–0.03 (original x units); "more sharply" is the claim tested.
	if !(rise[1] < 0.5*rise[0]) || !(rise[2] < 0.5*rise[0]) || math.IsNaN(rise[0]) {
		t.Errorf("rise widths %v: the deep GPs should rise at least twice as sharply", rise)
	}
}
