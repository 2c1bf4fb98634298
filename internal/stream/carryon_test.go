package stream

import (
	"math"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/modelfile"
	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/train"
	"dgpviz/internal/wire"
)

// small is a model of the squares data that converges in a few hundred
// iterations, even under -race.
const small = "data=csv:squares&hidden=&m=4&speed=0"

// stopped waits for a frame of an optimizer that has stopped by itself.
func stopped(t *testing.T, c *streamtest.Client) wire.Decoded {
	t.Helper()
	return c.Until("the optimizer to stop by itself", 60*time.Second, func(m streamtest.Msg) bool {
		return m.Type() == "frame" && m.Frame["running"] == false && m.Frame["paused"] == false && streamtest.Get(m.Frame, "optimizer", "status") != "not terminated"
	}).Frame
}

// TestEditCarriesOn is issue #26's first finding: after convergence an
// edit sets the optimizer going again by itself (the ack and the frames
// say running, not paused), and it repairs the edit to within 1 nat of
// the bound before it; a person's pause is kept through edits; a hold
// (a drag in the page) stops the iterations without being a pause.
func TestEditCarriesOn(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, small+"&play=1")
	f := stopped(t, c)
	if streamtest.Get(f, "optimizer", "converged") != true {
		t.Fatalf("the small model stopped without converging: %v", streamtest.Get(f, "optimizer"))
	}
	// The frame says what its status means, in train's words.
	var st train.Status
	if err := st.UnmarshalText([]byte(streamtest.Get(f, "optimizer", "status").(string))); err != nil || streamtest.Get(f, "optimizer", "explain") != st.Explain() {
		t.Errorf("optimizer %v: want the explanation of its status (%v)", streamtest.Get(f, "optimizer"), err)
	}
	b0 := streamtest.Num(f["bound"])
	// Pull layer 1's point 2 by 1 (model units).
	mu := streamtest.Num(streamtest.Get(f, "layers", 0, "u_mean").([]float64)[1])
	id := c.Send(map[string]any{"op": "move", "layer": 0, "index": 1, "mu": []float64{mu + 0.05}})
	if r := c.Reply(id); r["running"] != true {
		t.Fatalf("the edit's ack after convergence: %v, want running", r)
	}
	fe := c.FrameAfter(id)
	ed := streamtest.Get(fe, "edit")
	if ed == nil {
		t.Fatal("the edit's frame has no edit readout")
	}
	before, after := streamtest.Num(streamtest.Get(ed, "before", "bound")), streamtest.Num(streamtest.Get(ed, "after", "bound"))
	if before != b0 {
		t.Errorf("the readout's bound before the edit is %v, the frame before it said %v", before, b0)
	}
	if !strings.Contains(streamtest.Get(ed, "label").(string), "inducing point 2 of layer 1") || streamtest.Num(streamtest.Get(ed, "layer")) != 0 {
		t.Errorf("the readout's label and layer: %v, %v", streamtest.Get(ed, "label"), streamtest.Get(ed, "layer"))
	}
	if fe["running"] != true && streamtest.Get(fe, "optimizer", "status") == "not terminated" {
		t.Errorf("the edited model's frame is not running: %v", fe["running"])
	}
	t.Logf("the pull: %.3f → %.3f nats", before, after)
	f = fe
	if f["running"] == true { // else repaired before the first frame after the edit
		f = stopped(t, c)
	}
	t.Logf("repaired by itself to %.3f (%v) at iteration %v", streamtest.Num(f["bound"]), streamtest.Get(f, "optimizer", "status"), f["iter"])
	if b := streamtest.Num(f["bound"]); b < b0-1 {
		t.Errorf("after the edit the optimizer stopped at %.3f, more than 1 nat below %.3f", b, b0)
	}
	if e := streamtest.Get(f, "edit"); streamtest.Num(streamtest.Get(e, "after", "bound")) != after || streamtest.Num(streamtest.Get(e, "seq")) != streamtest.Num(streamtest.Get(ed, "seq")) {
		t.Errorf("the readout moved with the recovery: %v, want the edit's own %v", streamtest.Get(e, "after", "bound"), after)
	}

	// A person's pause stays through an edit.
	c.Ack(map[string]any{"op": "pause"})
	id = c.Send(map[string]any{"op": "move", "layer": 0, "index": 1, "mu": []float64{mu}})
	if r := c.Reply(id); r["running"] != false {
		t.Errorf("an edit while paused: %v, want it paused", r)
	}
	if f := c.FrameAfter(id); f["paused"] != true || f["running"] != false {
		t.Errorf("paused: %v, running: %v; want a paused frame", f["paused"], f["running"])
	}

	// A hold stops the iterations; the edits during it are one drag; a
	// release sets the optimizer going.
	c.Ack(map[string]any{"op": "play"})
	c.Ack(map[string]any{"op": "hold"})
	z := streamtest.Num(streamtest.Get(f, "layers", 0, "z").([]float64)[2])
	var seq float64
	var it0 float64 = -1
	for k := 1; k <= 3; k++ {
		fk := c.FrameAfter(c.Ack(map[string]any{"op": "move", "layer": 0, "index": 2, "z": []float64{z + 0.05*float64(k)}}))
		if fk["held"] != true || fk["paused"] != false {
			t.Errorf("a held frame: held %v, paused %v", fk["held"], fk["paused"])
		}
		if it0 < 0 {
			it0, seq = streamtest.Num(fk["iter"]), streamtest.Num(streamtest.Get(fk, "edit", "seq"))
		} else if streamtest.Num(fk["iter"]) != it0 || streamtest.Num(streamtest.Get(fk, "edit", "seq")) != seq {
			t.Errorf("move %d of a held drag: iteration %v (want %v), edit %v (want %v)", k, fk["iter"], it0, streamtest.Get(fk, "edit", "seq"), seq)
		}
	}
	// The release repairs the drag (the move while paused above pulled the
	// point to where the optimum had put it, so the drag is what is left
	// to repair); undo then takes back the drag as one edit.
	c.Ack(map[string]any{"op": "release"})
	c.Until("iterations after the release", 30*time.Second, func(m streamtest.Msg) bool {
		return m.Type() == "frame" && m.Frame["held"] == false && streamtest.Num(m.Frame["iter"]) > it0
	})
	if r := c.Reply(c.Send(map[string]any{"op": "undo"})); !strings.Contains(r["message"].(string), "move of inducing point 3") {
		t.Errorf("undo after a held drag: %v", r["message"])
	}
}

// TestEditReadout: every kind of edit has a readout whose "before" is the
// bound of the model before it and whose "after" is the bound of the
// edited model, to the last digit, term by term (bound = likelihood − Σ
// terms); a drag's moves share one readout number and its first "before";
// undo, data edits and restarts have theirs.
func TestEditReadout(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	f := c.FrameAfter(c.Ack(map[string]any{"op": "step", "n": 30}))
	check := func(what string, f0, f1 wire.Decoded, wantLayer float64, data bool) wire.Decoded {
		t.Helper()
		ed := streamtest.Get(f1, "edit")
		if ed == nil {
			t.Fatalf("%s: no readout", what)
		}
		if b := streamtest.Num(streamtest.Get(ed, "before", "bound")); b != streamtest.Num(f0["bound"]) {
			t.Errorf("%s: before %v, the frame before it %v", what, b, f0["bound"])
		}
		if b := streamtest.Num(streamtest.Get(ed, "after", "bound")); b != streamtest.Num(f1["bound"]) {
			t.Errorf("%s: after %v, the edit's frame %v", what, b, f1["bound"])
		}
		for _, side := range []string{"before", "after"} {
			s := streamtest.Get(ed, side).(map[string]any)
			sum := streamtest.Num(s["likelihood"])
			for _, k := range []string{"kl", "compression", "propagation"} {
				for _, v := range s[k].([]any) {
					sum -= streamtest.Num(v)
				}
			}
			if b := streamtest.Num(s["bound"]); math.Abs(sum-b) > 1e-9*math.Max(1, math.Abs(b)) {
				t.Errorf("%s, %s: likelihood − terms = %v, bound %v", what, side, sum, b)
			}
		}
		if streamtest.Num(streamtest.Get(ed, "layer")) != wantLayer || streamtest.Get(ed, "data") != data {
			t.Errorf("%s: layer %v, data %v; want %v, %v", what, streamtest.Get(ed, "layer"), streamtest.Get(ed, "data"), wantLayer, data)
		}
		return ed.(map[string]any)
	}
	z := streamtest.Get(f, "layers", 2, "z").([]float64)
	f1 := c.FrameAfter(c.Ack(map[string]any{"op": "move", "layer": 2, "index": 4, "z": []float64{z[4] + 0.1}}))
	d1 := check("move", f, f1, 2, false)
	f2 := c.FrameAfter(c.Ack(map[string]any{"op": "move", "layer": 2, "index": 4, "z": []float64{z[4] + 0.3}}))
	d2 := streamtest.Get(f2, "edit").(map[string]any)
	if d2["seq"] != d1["seq"] || streamtest.Num(streamtest.Get(d2, "before", "bound")) != streamtest.Num(f["bound"]) {
		t.Errorf("a drag's second move: readout %v before %v, want %v and the drag's first before %v", d2["seq"], streamtest.Get(d2, "before", "bound"), d1["seq"], f["bound"])
	}
	f3 := c.FrameAfter(c.Ack(map[string]any{"op": "undo"}))
	d3 := check("undo", f2, f3, 2, false)
	if !strings.HasPrefix(d3["label"].(string), "undo of the move") || d3["seq"] == d1["seq"] {
		t.Errorf("undo's readout: %v (%v)", d3["label"], d3["seq"])
	}
	f4 := c.FrameAfter(c.Ack(map[string]any{"op": "add", "layer": 1, "z": []float64{0.2}}))
	check("add", f3, f4, 1, false)
	f5 := c.FrameAfter(c.Ack(map[string]any{"op": "remove", "layer": 1, "index": 0}))
	check("remove", f4, f5, 1, false)
	f6 := c.FrameAfter(c.Ack(map[string]any{"op": "add_data", "x": []float64{0.3}, "y": []float64{-1}}))
	check("add_data", f5, f6, -1, true)
	f7 := c.FrameAfter(c.Ack(map[string]any{"op": "move_data", "index": 30, "y": []float64{1}}))
	check("move_data", f6, f7, -1, true)
	f8 := c.FrameAfter(c.Ack(map[string]any{"op": "remove_data", "index": 30}))
	check("remove_data", f7, f8, -1, true)
	// A new model is no edit: the readout goes.
	if f9 := c.FrameAfter(c.Ack(map[string]any{"op": "reset"})); streamtest.Get(f9, "edit") != nil {
		t.Errorf("a reset kept the readout %v", streamtest.Get(f9, "edit"))
	}
}

// TestCollapseNeverConverged: the naïve edit of the fitted step model ends
// in a collapse, which frames report (the layer, its KL) and never call
// converged; undo gives the fitted model back.
func TestCollapseNeverConverged(t *testing.T) {
	e := newEnv(t, nil)
	mf, err := modelfile.ReadFile("../engine/testdata/step3_fitted.json")
	if err != nil {
		t.Fatal(err)
	}
	token, err := e.Srv.ParkModel("test", mf)
	if err != nil {
		t.Fatal(err)
	}
	c := e.Dial(t, "resume="+token)
	f := c.Until("the loaded model", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" }).Frame
	b0 := streamtest.Num(f["bound"])
	z := streamtest.Get(f, "layers", 2, "z").([]float64)
	lo, hi := z[0], z[0]
	for _, v := range z {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	c.Ack(map[string]any{"op": "move", "layer": 2, "index": 5, "z": []float64{z[5] + 0.1*(hi-lo)}, "keep_u": true})
	c.Ack(map[string]any{"op": "speed", "speed": 0})
	c.Ack(map[string]any{"op": "play"})
	f = stopped(t, c)
	t.Logf("after the naïve edit: bound %.3f, %v, collapse %v", streamtest.Num(f["bound"]), streamtest.Get(f, "optimizer", "status"), streamtest.Get(f, "collapse"))
	if streamtest.Num(f["bound"]) > b0-1 {
		t.Skipf("the optimizer repaired the naïve edit (bound %.3f): no collapse to report", streamtest.Num(f["bound"]))
	}
	if streamtest.Get(f, "collapse") == nil {
		t.Fatalf("the optimizer stopped at %.3f (fitted %.3f) without a collapse in the frame", streamtest.Num(f["bound"]), b0)
	}
	if streamtest.Get(f, "optimizer", "converged") != false {
		t.Error("a collapse is called converged")
	}
	c.Ack(map[string]any{"op": "pause"})
	if f := c.FrameAfter(c.Ack(map[string]any{"op": "undo"})); streamtest.Num(f["bound"]) != b0 || streamtest.Get(f, "collapse") != nil {
		t.Errorf("undo: bound %v (want %v), collapse %v", f["bound"], b0, streamtest.Get(f, "collapse"))
	}
}

// TestResumeKeepsShare is the relay developer's finding: a presenter whose
// connection drops and who resumes keeps the share — the same key, its
// followers (who are not closed meanwhile and see frames again after the
// resume, numbered on), the bound history from the start for a follower
// who joins after, and the view's messages (the fit's density) for them.
func TestResumeKeepsShare(t *testing.T) {
	e := newEnv(t, nil)
	p := e.Dial(t, streamtest.Paused)
	hello := p.Until("hello", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "hello" }).Text
	key, token := hello["share_key"].(string), hello["resume"].(string)
	p.FrameAfter(p.Ack(map[string]any{"op": "step", "n": 10}))
	f := e.Dial(t, "follow="+key)
	last := f.Until("the presenter's frame", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" && streamtest.Num(m.Frame["iter"]) == 10 }).Frame
	p.Conn.Close() // a dropped connection: no close frame
	streamtest.Eventually(t, 10*time.Second, func() bool { return e.Srv.Parked() == 1 }, func() string { return "the presenter was not parked" })
	late := e.Dial(t, "follow="+key) // joins while the presenter is away
	late.Until("the late follower's frame", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })

	r := e.Dial(t, streamtest.Paused+"&resume="+token)
	rh := r.Until("hello", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "hello" }).Text
	if rh["share_key"] != key {
		t.Fatalf("the resumed session shares under %v, want %v", rh["share_key"], key)
	}
	id := r.Ack(map[string]any{"op": "step", "n": 5})
	r.FrameAfter(id)
	got := f.Until("a frame of the resumed session", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" && streamtest.Num(m.Frame["iter"]) == 15 }).Frame
	if streamtest.Num(got["seq"]) <= streamtest.Num(last["seq"]) {
		t.Errorf("the resumed session's frame has seq %v, not after %v", got["seq"], last["seq"])
	}
	late.Until("the resumed session's frame (late follower)", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" && streamtest.Num(m.Frame["iter"]) == 15 })
	// A new follower gets the history from iteration 0.
	n := e.Dial(t, "follow="+key)
	h := n.Until("history", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "history" }).Frame
	if its := streamtest.Floats(h["iters"]); len(its) == 0 || its[0] != 0 || its[len(its)-1] < 10 {
		t.Errorf("the history after the resume: iterations %v, want 0 … ≥ 10", its)
	}
	// The view's messages reach followers too.
	r.Ack(map[string]any{"op": "fit_density", "samples": 100})
	f.Until("the presenter's fit density", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "fit_density" })
	later := e.Dial(t, "follow="+key)
	later.Until("the fit density for a follower who joins after", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "fit_density" })
}

// TestWatchRepair: with watch_repair on, an edit's repair runs at the
// session's speed from its first iteration — the frames do not say fast,
// and the iterations in a second after the edit are about the speed —,
// where without it the repair runs fast until the bound settles.
func TestWatchRepair(t *testing.T) {
	e := newEnv(t, nil)
	const speed = 20
	c := e.Dial(t, strings.Replace(small, "speed=0", "speed=20", 1)+"&play=1")
	f := stopped(t, c)
	c.Ack(map[string]any{"op": "speed", "watch_repair": true})
	// An inducing input moved: the optimizer must move it back (a pull of
	// this one-layer model's q(u) is undone at once: it is kept optimal).
	z := streamtest.Num(streamtest.Get(f, "layers", 0, "z").([]float64)[1])
	id := c.Send(map[string]any{"op": "move", "layer": 0, "index": 1, "z": []float64{z + 0.5}})
	fe := c.FrameAfter(id)
	it0 := streamtest.Num(fe["iter"])
	start := time.Now()
	var fast bool
	var last wire.Decoded
	c.Until("a second of the repair", 30*time.Second, func(m streamtest.Msg) bool {
		if m.Type() != "frame" {
			return false
		}
		last = m.Frame
		fast = fast || streamtest.Get(m.Frame, "optimizer", "fast") == true
		return time.Since(start) > time.Second || m.Frame["running"] != true
	})
	if last["running"] != true {
		t.Fatalf("the repair stopped after %v iterations: %v", streamtest.Num(last["iter"])-it0, streamtest.Get(last, "optimizer"))
	}
	its := streamtest.Num(last["iter"]) - it0
	secs := time.Since(start).Seconds()
	t.Logf("watched repair: %v iterations in %.2f s at speed %d", its, secs, speed)
	if fast {
		t.Error("a watched repair's frames say fast")
	}
	if its > speed*secs+5 {
		t.Errorf("a watched repair ran %v iterations in %.2f s, more than the speed (%d/s) allows", its, secs, speed)
	}
	// Off again: the next edit's repair runs fast.
	c.Ack(map[string]any{"op": "speed", "watch_repair": false})
	id = c.Send(map[string]any{"op": "move", "layer": 0, "index": 1, "z": []float64{z - 0.5}})
	if fe := c.FrameAfter(id); fe["running"] == true && streamtest.Get(fe, "optimizer", "fast") != true {
		t.Errorf("without watch_repair the repair's first frame is not fast: %v", streamtest.Get(fe, "optimizer"))
	}
}
