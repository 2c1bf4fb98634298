package regression_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/montecarlo"
	"dgpviz/internal/stream/streamtest"
)

func helloKey(t *testing.T, c *streamtest.Client) string {
	t.Helper()
	h := c.Until("hello", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "hello" }).Text
	k, _ := h["figure_key"].(string)
	if len(k) != 32 {
		t.Fatalf("hello has no figure_key: %v", h)
	}
	return k
}

// TestMCMatchesMessageFigure: an mc command yields an mc message whose
// numbers are montecarlo.MessageFigure's on the session's snapshot.
func TestMCMatchesMessageFigure(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	key := helloKey(t, c)
	c.FrameAfter(c.Ack(map[string]any{"op": "step", "n": 5})) // steps run after the ack
	ins := []map[string]any{{"mean": -0.8, "var": 0.01}, {"mean": 0.1, "var": 0.04}, {"mean": 2.5, "var": 0.01}, {"mean": 0.0, "var": 0.5}}
	id := c.Ack(map[string]any{"op": "message_figure", "layer": 1, "inputs": ins, "samples": 5000})
	got := c.FigureAfter(id)
	if got["error"] != nil {
		t.Fatalf("mc error: %v", got["error"])
	}
	fs, ok := e.Srv.FigureSession(key)
	if !ok {
		t.Fatal("FigureSession: session not found")
	}
	if streamtest.Num(got["iter"]) != float64(fs.Iter) || fs.Iter != 5 {
		t.Fatalf("mc message of iteration %v, snapshot %d", got["iter"], fs.Iter)
	}
	gi := make([]montecarlo.GaussianInput, len(ins))
	for i, in := range ins {
		gi[i] = montecarlo.GaussianInput{Mean: in["mean"].(float64), Var: in["var"].(float64)}
	}
	want, err := montecarlo.MessageFigure(fs.Model, 1, gi, 5000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got["layer"] != 1.0 || got["samples"] != 5000.0 || got["seed"] != 1.0 {
		t.Errorf("layer %v samples %v seed %v", got["layer"], got["samples"], got["seed"])
	}
	if streamtest.Num(got["noise"]) != want.NoiseVariance {
		t.Errorf("noise %v, want %v", got["noise"], want.NoiseVariance)
	}
	for i, w := range want.Inputs {
		g := streamtest.Get(got, "inputs", i)
		for _, f := range []struct {
			name string
			got  any
			want float64
		}{
			{"mean", streamtest.Get(g, "mean"), w.Input.Mean},
			{"var", streamtest.Get(g, "var"), w.Input.Var},
			{"message.mean", streamtest.Get(g, "message", "mean"), w.Message.Mean},
			{"message.var", streamtest.Get(g, "message", "var"), w.Message.Var},
			{"true.var", streamtest.Get(g, "true", "var"), w.True.Var},
			{"mc_mean", streamtest.Get(g, "mc_mean"), w.MC.Mean},
			{"mc_var", streamtest.Get(g, "mc_var"), w.MC.Var},
			{"compression", streamtest.Get(g, "compression"), w.Compression},
			{"propagation", streamtest.Get(g, "propagation"), w.Propagation},
			{"w1", streamtest.Get(g, "w1"), w.Distance.W1},
			{"kl", streamtest.Get(g, "kl"), w.Distance.KL},
		} {
			if streamtest.Num(f.got) != f.want {
				t.Errorf("input %d: %s = %v, MessageFigure %v", i, f.name, f.got, f.want)
			}
		}
		// The density is sent quantised (q16): screen precision.
		p := streamtest.Floats(streamtest.Get(g, "density", "p"))
		if len(p) != len(w.Density.P) {
			t.Fatalf("input %d: density of %d points, want %d", i, len(p), len(w.Density.P))
		}
		mx := 0.0
		for _, v := range w.Density.P {
			mx = math.Max(mx, v)
		}
		for k := range p {
			if math.Abs(p[k]-w.Density.P[k]) > 1e-4*mx {
				t.Fatalf("input %d: density[%d] = %v, want %v", i, k, p[k], w.Density.P[k])
			}
		}
	}
	if n := len(streamtest.Floats(streamtest.Get(got, "inducing", "z"))); n != len(want.Inducing) {
		t.Errorf("%d inducing bars, want %d", n, len(want.Inducing))
	}
	if n := len(streamtest.Floats(streamtest.Get(got, "gp", "mean"))); n != montecarlo.GPGridPoints {
		t.Errorf("GP curve of %d points", n)
	}
	// Far input: larger compression than the near one (the readout's point).
	if !(streamtest.Num(streamtest.Get(got, "inputs", 2, "compression")) > streamtest.Num(streamtest.Get(got, "inputs", 0, "compression"))) {
		t.Errorf("far input compression %v ≤ near %v", streamtest.Get(got, "inputs", 2, "compression"), streamtest.Get(got, "inputs", 0, "compression"))
	}
}

// TestMCPresetsAndLive: presets set four inputs; the figure follows the
// optimizer while it runs; mc_off stops it.
func TestMCPresetsAndLive(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	helloKey(t, c)
	c.FrameAfter(c.Ack(map[string]any{"op": "step", "n": 20}))
	comp := map[string]float64{}
	for _, name := range montecarlo.InputSetNames() {
		id := c.Ack(map[string]any{"op": "message_figure_preset", "layer": 0, "name": name, "samples": 2000})
		m := c.FigureAfter(id)
		if m["preset"] != name || len(streamtest.Get(m, "inputs").([]any)) != 4 {
			t.Fatalf("preset %q: got preset %v with %v", name, m["preset"], streamtest.Get(m, "inputs"))
		}
		for k := 0; k < 4; k++ {
			comp[name] = math.Max(comp[name], streamtest.Num(streamtest.Get(m, "inputs", k, "compression")))
		}
	}
	if !(comp[montecarlo.InputSetFar] > comp[montecarlo.InputSetWell]) {
		t.Errorf("compression: far %v, well represented %v", comp[montecarlo.InputSetFar], comp[montecarlo.InputSetWell])
	}
	// "message_figure" without inputs keeps the preset's; the figure follows the model.
	c.Ack(map[string]any{"op": "play"})
	it0 := -1.0
	c.Until("mc messages of new iterations", 10*time.Second, func(m streamtest.Msg) bool {
		if m.Type() != "message_figure" {
			return false
		}
		it := streamtest.Num(m.Frame["iter"])
		if it0 < 0 {
			it0 = it
		}
		return it > it0
	})
	c.Ack(map[string]any{"op": "pause"})
	c.Ack(map[string]any{"op": "message_figure_off"})
	// After mc_off (and whatever was in flight), no more mc messages.
	time.Sleep(200 * time.Millisecond)
	c.Ack(map[string]any{"op": "step"})
	end := time.Now().Add(400 * time.Millisecond)
	for time.Now().Before(end) {
		m, err := c.Read(time.Until(end))
		if err != nil {
			break
		}
		if m.Type() == "message_figure" {
			t.Fatalf("mc message after mc_off: seq %v", m.Frame["seq"])
		}
	}
}

// TestBadFigureCommands: every bad message_figure command gets an error naming the field;
// the session survives.
func TestBadFigureCommands(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	helloKey(t, c)
	nine := make([]map[string]any, 9)
	for i := range nine {
		nine[i] = map[string]any{"mean": 0, "var": 1}
	}
	cases := []struct {
		cmd  map[string]any
		want string
	}{
		{map[string]any{"op": "message_figure", "layer": 7}, "there is no layer 8"},
		{map[string]any{"op": "message_figure", "layer": -1}, "there is no layer 0"},
		{map[string]any{"op": "message_figure", "layer": 0, "inputs": []any{}}, "0 inputs, want 1…8"},
		{map[string]any{"op": "message_figure", "layer": 0, "inputs": nine}, "9 inputs, want 1…8"},
		{map[string]any{"op": "message_figure", "layer": 0, "inputs": []map[string]any{{"mean": 0, "var": 0}}}, "input 1 has variance 0"},
		{map[string]any{"op": "message_figure", "layer": 0, "inputs": []map[string]any{{"mean": 0, "var": 1}, {"mean": 0, "var": -2}}}, "input 2 has variance -2"},
		{map[string]any{"op": "message_figure", "layer": 0, "inputs": []map[string]any{{"mean": 1e9, "var": 1}}}, "input 1 has mean"},
		{map[string]any{"op": "message_figure", "layer": 0, "inputs": []map[string]any{{"mean": 0, "var": 1e9}}}, "input 1 has variance"},
		{map[string]any{"op": "message_figure", "layer": 0, "samples": 10}, "10 samples is out of range"},
		{map[string]any{"op": "message_figure", "layer": 0, "samples": 1 << 30}, "samples"},
		{map[string]any{"op": "message_figure", "layer": 0, "name": "x"}, "use message_figure_preset"},
		{map[string]any{"op": "message_figure_preset", "layer": 0}, "missing \"name\""},
		{map[string]any{"op": "message_figure_preset", "layer": 0, "name": "everything"}, "unknown name"},
		{map[string]any{"op": "message_figure_preset", "layer": 5, "name": montecarlo.InputSetFar}, "there is no layer 6"},
	}
	for _, tc := range cases {
		id := c.Send(tc.cmd)
		r := c.Reply(id)
		if r["type"] != "error" {
			t.Errorf("%v: want error, got %v", tc.cmd, r)
			continue
		}
		if s, _ := r["error"].(string); !strings.Contains(s, tc.want) || strings.Contains(s, "stream: ") || strings.HasPrefix(s, "message_figure") {
			t.Errorf("%v: error %q does not contain %q", tc.cmd, s, tc.want)
		}
	}
	// Raw hostile forms.
	for _, raw := range []string{
		`{"op":"message_figure","layer":0,"inputs":[{"mean":"a","var":1}]}`,
		`{"op":"message_figure","layer":0,"inputs":[{"mean":0,"var":1,"sd":2}]}`,
		`{"op":"message_figure","layer":0,"inputs":{"mean":0}}`,
		`{"op":"message_figure","layer":0,"inputs":[{"mean":1e400,"var":1}]}`,
	} {
		if err := c.Conn.WriteMessage(1, []byte(raw)); err != nil {
			t.Fatal(err)
		}
		m := c.Until("error", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "error" || m.Type() == "ack" })
		if m.Type() != "error" {
			t.Errorf("%s: want error, got %v", raw, m.Text)
		}
	}
	// A 2-D layer is refused with the reason.
	c.Ack(map[string]any{"op": "architecture", "hidden": []int{2}})
	r := c.Reply(c.Send(map[string]any{"op": "message_figure", "layer": 0}))
	if s, _ := r["error"].(string); !strings.Contains(s, "2 output dimensions") {
		t.Errorf("2-D layer: %v", r)
	}
	c.Ack(map[string]any{"op": "architecture", "hidden": []int{1}})
	// The session is alive and the figure works.
	id := c.Ack(map[string]any{"op": "message_figure", "layer": 0, "inputs": []map[string]any{{"mean": 0, "var": 0.1}}, "samples": 1000})
	if m := c.FigureAfter(id); m["error"] != nil || len(streamtest.Get(m, "inputs").([]any)) != 1 {
		t.Fatalf("mc after errors: %v", m)
	}
}

// TestMCLayerGoneReportsError: when an architecture change removes the
// figure's layer, the mc message says so instead of failing silently.
func TestMCLayerGoneReportsError(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	helloKey(t, c)
	id := c.Ack(map[string]any{"op": "message_figure", "layer": 2, "samples": 1000})
	if m := c.FigureAfter(id); m["error"] != nil {
		t.Fatalf("mc: %v", m["error"])
	}
	c.Ack(map[string]any{"op": "architecture", "hidden": []int{1}})
	m := c.Until("mc error", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "message_figure" && m.Frame["error"] != nil })
	if s, _ := m.Frame["error"].(string); !strings.Contains(s, "there is no layer 3") || strings.Contains(s, "stream: ") {
		t.Fatalf("error %q", s)
	}
}
