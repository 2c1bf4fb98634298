package regression_test

import (
	"math"
	"testing"
	"time"

	"dgpviz/internal/stream"
	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/wire"
)

// TestDataEdits checks adding, moving and removing data points, undo of
// each, and resetting the data: setups with the edited data arrive, the
// normalisation stays fixed, and the model keeps its parameters.
func TestDataEdits(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	s0 := c.Until("setup", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "setup" }).Frame
	n0 := int(streamtest.Num(s0["n"]))
	norm0 := streamtest.Num(streamtest.Get(s0, "norm_x", "scale", 0))
	setupAfter := func(cmd map[string]any) wire.Decoded {
		t.Helper()
		c.Send(cmd)
		return c.Until("setup", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "setup" }).Frame
	}
	s := setupAfter(map[string]any{"op": "add_data", "x": []float64{0.25}, "y": []float64{1.5}})
	if int(streamtest.Num(s["n"])) != n0+1 || s["edited"] != true {
		t.Fatalf("add_data: n %v edited %v, want %d true", s["n"], s["edited"], n0+1)
	}
	if xs := streamtest.Floats(s["x"]); math.Abs(xs[n0]-0.25) > 1e-6 || math.Abs(streamtest.Floats(s["y"])[n0]-1.5) > 1e-6 {
		t.Errorf("the added point is (%v, %v), want (0.25, 1.5)", xs[n0], streamtest.Floats(s["y"])[n0])
	}
	if f := c.FrameAfter(c.Ack(map[string]any{"op": "step"})); int(streamtest.Num(f["n"])) != n0+1 || f["data_id"] != s["data_id"] {
		t.Errorf("frame after add_data: n %v data_id %v, want %d %v", f["n"], f["data_id"], n0+1, s["data_id"])
	}
	s = setupAfter(map[string]any{"op": "move_data", "index": 0, "y": []float64{-2}})
	if math.Abs(streamtest.Floats(s["y"])[0]+2) > 1e-6 {
		t.Errorf("move_data: y[0] = %v, want -2", streamtest.Floats(s["y"])[0])
	}
	s = setupAfter(map[string]any{"op": "remove_data", "index": 1})
	if int(streamtest.Num(s["n"])) != n0 {
		t.Errorf("remove_data: n %v, want %d", s["n"], n0)
	}
	if g := streamtest.Num(streamtest.Get(s, "norm_x", "scale", 0)); g != norm0 {
		t.Errorf("normalisation changed: %v → %v", norm0, g)
	}
	s = setupAfter(map[string]any{"op": "undo"})
	if int(streamtest.Num(s["n"])) != n0+1 {
		t.Errorf("undo of remove_data: n %v, want %d", s["n"], n0+1)
	}
	s = setupAfter(map[string]any{"op": "reset_data"})
	if int(streamtest.Num(s["n"])) != n0 || s["edited"] != false || streamtest.Floats(s["y"])[0] != streamtest.Floats(s0["y"])[0] {
		t.Errorf("reset_data: n %v edited %v y0 %v, want %d false %v", s["n"], s["edited"], streamtest.Floats(s["y"])[0], n0, streamtest.Floats(s0["y"])[0])
	}
	// Robot-shaped data (30 outputs) cannot be edited point by point.
	e2 := newEnv(t, func(o *stream.Options) { o.Catalog.Add(streamtest.WideData(40, 3), o.Limits.MaxRows) })
	c2 := e2.Dial(t, streamtest.Paused+"&data=wide&hidden=2")
	r := c2.Reply(c2.Send(map[string]any{"op": "add_data", "x": []float64{0}, "y": []float64{0}}))
	if e, _ := r["error"].(string); r["type"] != "error" || e == "" {
		t.Errorf("add_data on 3-output data: %v, want an error", r)
	}
}
