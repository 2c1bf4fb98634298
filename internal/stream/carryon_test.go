package stream

import (
	"math"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/modelfile"
	"dgpviz/internal/train"
	"dgpviz/internal/wire"
)

// small is a model of the squares data that converges in a few hundred
// iterations, even under -race.
const small = "data=csv:squares&hidden=&m=4&speed=0"

// stopped waits for a frame of an optimizer that has stopped by itself.
func stopped(t *testing.T, c *client) wire.Decoded {
	t.Helper()
	return c.until("the optimizer to stop by itself", 60*time.Second, func(m msg) bool {
		return m.typ() == "frame" && m.frame["running"] == false && m.frame["paused"] == false && get(m.frame, "optimizer", "status") != "not terminated"
	}).frame
}

// TestEditCarriesOn is issue #26's first finding: after convergence an
// edit sets the optimizer going again by itself (the ack and the frames
// say running, not paused), and it repairs the edit to within 1 nat of
// the bound before it; a person's pause is kept through edits; a hold
// (a drag in the page) stops the iterations without being a pause.
func TestEditCarriesOn(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, small+"&play=1")
	f := stopped(t, c)
	if get(f, "optimizer", "converged") != true {
		t.Fatalf("the small model stopped without converging: %v", get(f, "optimizer"))
	}
	// The frame says what its status means, in train's words.
	var st train.Status
	if err := st.UnmarshalText([]byte(get(f, "optimizer", "status").(string))); err != nil || get(f, "optimizer", "explain") != st.Explain() {
		t.Errorf("optimizer %v: want the explanation of its status (%v)", get(f, "optimizer"), err)
	}
	b0 := num64(f["bound"])
	// Pull layer 1's point 2 by 1 (model units).
	mu := num64(get(f, "layers", 0, "u_mean").([]float64)[1])
	id := c.send(map[string]any{"op": "move", "layer": 0, "index": 1, "mu": []float64{mu + 0.05}})
	if r := c.reply(id); r["running"] != true {
		t.Fatalf("the edit's ack after convergence: %v, want running", r)
	}
	fe := c.frameAfter(id)
	ed := get(fe, "edit")
	if ed == nil {
		t.Fatal("the edit's frame has no edit readout")
	}
	before, after := num64(get(ed, "before", "bound")), num64(get(ed, "after", "bound"))
	if before != b0 {
		t.Errorf("the readout's bound before the edit is %v, the frame before it said %v", before, b0)
	}
	if !strings.Contains(get(ed, "label").(string), "inducing point 2 of layer 1") || num64(get(ed, "layer")) != 0 {
		t.Errorf("the readout's label and layer: %v, %v", get(ed, "label"), get(ed, "layer"))
	}
	if fe["running"] != true && get(fe, "optimizer", "status") == "not terminated" {
		t.Errorf("the edited model's frame is not running: %v", fe["running"])
	}
	t.Logf("the pull: %.3f → %.3f nats", before, after)
	f = fe
	if f["running"] == true { // else repaired before the first frame after the edit
		f = stopped(t, c)
	}
	t.Logf("repaired by itself to %.3f (%v) at iteration %v", num64(f["bound"]), get(f, "optimizer", "status"), f["iter"])
	if b := num64(f["bound"]); b < b0-1 {
		t.Errorf("after the edit the optimizer stopped at %.3f, more than 1 nat below %.3f", b, b0)
	}
	if e := get(f, "edit"); num64(get(e, "after", "bound")) != after || num64(get(e, "seq")) != num64(get(ed, "seq")) {
		t.Errorf("the readout moved with the recovery: %v, want the edit's own %v", get(e, "after", "bound"), after)
	}

	// A person's pause stays through an edit.
	c.ack(map[string]any{"op": "pause"})
	id = c.send(map[string]any{"op": "move", "layer": 0, "index": 1, "mu": []float64{mu}})
	if r := c.reply(id); r["running"] != false {
		t.Errorf("an edit while paused: %v, want it paused", r)
	}
	if f := c.frameAfter(id); f["paused"] != true || f["running"] != false {
		t.Errorf("paused: %v, running: %v; want a paused frame", f["paused"], f["running"])
	}

	// A hold stops the iterations; the edits during it are one drag; a
	// release sets the optimizer going.
	c.ack(map[string]any{"op": "play"})
	c.ack(map[string]any{"op": "hold"})
	z := num64(get(f, "layers", 0, "z").([]float64)[2])
	var seq float64
	var it0 float64 = -1
	for k := 1; k <= 3; k++ {
		fk := c.frameAfter(c.ack(map[string]any{"op": "move", "layer": 0, "index": 2, "z": []float64{z + 0.05*float64(k)}}))
		if fk["held"] != true || fk["paused"] != false {
			t.Errorf("a held frame: held %v, paused %v", fk["held"], fk["paused"])
		}
		if it0 < 0 {
			it0, seq = num64(fk["iter"]), num64(get(fk, "edit", "seq"))
		} else if num64(fk["iter"]) != it0 || num64(get(fk, "edit", "seq")) != seq {
			t.Errorf("move %d of a held drag: iteration %v (want %v), edit %v (want %v)", k, fk["iter"], it0, get(fk, "edit", "seq"), seq)
		}
	}
	// The release repairs the drag (the move while paused above pulled the
	// point to where the optimum had put it, so the drag is what is left
	// to repair); undo then takes back the drag as one edit.
	c.ack(map[string]any{"op": "release"})
	c.until("iterations after the release", 30*time.Second, func(m msg) bool {
		return m.typ() == "frame" && m.frame["held"] == false && num64(m.frame["iter"]) > it0
	})
	if r := c.reply(c.send(map[string]any{"op": "undo"})); !strings.Contains(r["message"].(string), "move of inducing point 3") {
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
	c := e.dial(t, paused)
	f := c.frameAfter(c.ack(map[string]any{"op": "step", "n": 30}))
	check := func(what string, f0, f1 wire.Decoded, wantLayer float64, data bool) wire.Decoded {
		t.Helper()
		ed := get(f1, "edit")
		if ed == nil {
			t.Fatalf("%s: no readout", what)
		}
		if b := num64(get(ed, "before", "bound")); b != num64(f0["bound"]) {
			t.Errorf("%s: before %v, the frame before it %v", what, b, f0["bound"])
		}
		if b := num64(get(ed, "after", "bound")); b != num64(f1["bound"]) {
			t.Errorf("%s: after %v, the edit's frame %v", what, b, f1["bound"])
		}
		for _, side := range []string{"before", "after"} {
			s := get(ed, side).(map[string]any)
			sum := num64(s["likelihood"])
			for _, k := range []string{"kl", "compression", "propagation"} {
				for _, v := range s[k].([]any) {
					sum -= num64(v)
				}
			}
			if b := num64(s["bound"]); math.Abs(sum-b) > 1e-9*math.Max(1, math.Abs(b)) {
				t.Errorf("%s, %s: likelihood − terms = %v, bound %v", what, side, sum, b)
			}
		}
		if num64(get(ed, "layer")) != wantLayer || get(ed, "data") != data {
			t.Errorf("%s: layer %v, data %v; want %v, %v", what, get(ed, "layer"), get(ed, "data"), wantLayer, data)
		}
		return ed.(map[string]any)
	}
	z := get(f, "layers", 2, "z").([]float64)
	f1 := c.frameAfter(c.ack(map[string]any{"op": "move", "layer": 2, "index": 4, "z": []float64{z[4] + 0.1}}))
	d1 := check("move", f, f1, 2, false)
	f2 := c.frameAfter(c.ack(map[string]any{"op": "move", "layer": 2, "index": 4, "z": []float64{z[4] + 0.3}}))
	d2 := get(f2, "edit").(map[string]any)
	if d2["seq"] != d1["seq"] || num64(get(d2, "before", "bound")) != num64(f["bound"]) {
		t.Errorf("a drag's second move: readout %v before %v, want %v and the drag's first before %v", d2["seq"], get(d2, "before", "bound"), d1["seq"], f["bound"])
	}
	f3 := c.frameAfter(c.ack(map[string]any{"op": "undo"}))
	d3 := check("undo", f2, f3, 2, false)
	if !strings.HasPrefix(d3["label"].(string), "undo of the move") || d3["seq"] == d1["seq"] {
		t.Errorf("undo's readout: %v (%v)", d3["label"], d3["seq"])
	}
	f4 := c.frameAfter(c.ack(map[string]any{"op": "add", "layer": 1, "z": []float64{0.2}}))
	check("add", f3, f4, 1, false)
	f5 := c.frameAfter(c.ack(map[string]any{"op": "remove", "layer": 1, "index": 0}))
	check("remove", f4, f5, 1, false)
	f6 := c.frameAfter(c.ack(map[string]any{"op": "add_data", "x": []float64{0.3}, "y": []float64{-1}}))
	check("add_data", f5, f6, -1, true)
	f7 := c.frameAfter(c.ack(map[string]any{"op": "move_data", "index": 30, "y": []float64{1}}))
	check("move_data", f6, f7, -1, true)
	f8 := c.frameAfter(c.ack(map[string]any{"op": "remove_data", "index": 30}))
	check("remove_data", f7, f8, -1, true)
	// A new model is no edit: the readout goes.
	if f9 := c.frameAfter(c.ack(map[string]any{"op": "reset"})); get(f9, "edit") != nil {
		t.Errorf("a reset kept the readout %v", get(f9, "edit"))
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
	token, err := e.srv.ParkModel("test", mf)
	if err != nil {
		t.Fatal(err)
	}
	c := e.dial(t, "resume="+token)
	f := c.until("the loaded model", 10*time.Second, func(m msg) bool { return m.typ() == "frame" }).frame
	b0 := num64(f["bound"])
	z := get(f, "layers", 2, "z").([]float64)
	lo, hi := z[0], z[0]
	for _, v := range z {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	c.ack(map[string]any{"op": "move", "layer": 2, "index": 5, "z": []float64{z[5] + 0.1*(hi-lo)}, "keep_u": true})
	c.ack(map[string]any{"op": "speed", "speed": 0})
	c.ack(map[string]any{"op": "play"})
	f = stopped(t, c)
	t.Logf("after the naïve edit: bound %.3f, %v, collapse %v", num64(f["bound"]), get(f, "optimizer", "status"), get(f, "collapse"))
	if num64(f["bound"]) > b0-1 {
		t.Skipf("the optimizer repaired the naïve edit (bound %.3f): no collapse to report", num64(f["bound"]))
	}
	if get(f, "collapse") == nil {
		t.Fatalf("the optimizer stopped at %.3f (fitted %.3f) without a collapse in the frame", num64(f["bound"]), b0)
	}
	if get(f, "optimizer", "converged") != false {
		t.Error("a collapse is called converged")
	}
	c.ack(map[string]any{"op": "pause"})
	if f := c.frameAfter(c.ack(map[string]any{"op": "undo"})); num64(f["bound"]) != b0 || get(f, "collapse") != nil {
		t.Errorf("undo: bound %v (want %v), collapse %v", f["bound"], b0, get(f, "collapse"))
	}
}

// TestResumeKeepsShare is the relay developer's finding: a presenter whose
// connection drops and who resumes keeps the share — the same key, its
// followers (who are not closed meanwhile and see frames again after the
// resume, numbered on), the bound history from the start for a follower
// who joins after, and the view's messages (the fit's density) for them.
func TestResumeKeepsShare(t *testing.T) {
	e := newEnv(t, nil)
	p := e.dial(t, paused)
	hello := p.until("hello", 5*time.Second, func(m msg) bool { return m.typ() == "hello" }).text
	key, token := hello["share_key"].(string), hello["resume"].(string)
	p.frameAfter(p.ack(map[string]any{"op": "step", "n": 10}))
	f := e.dial(t, "follow="+key)
	last := f.until("the presenter's frame", 10*time.Second, func(m msg) bool { return m.typ() == "frame" && num64(m.frame["iter"]) == 10 }).frame
	p.c.Close() // a dropped connection: no close frame
	eventually(t, 10*time.Second, func() bool { return e.srv.Parked() == 1 }, func() string { return "the presenter was not parked" })
	late := e.dial(t, "follow="+key) // joins while the presenter is away
	late.until("the late follower's frame", 10*time.Second, func(m msg) bool { return m.typ() == "frame" })

	r := e.dial(t, paused+"&resume="+token)
	rh := r.until("hello", 5*time.Second, func(m msg) bool { return m.typ() == "hello" }).text
	if rh["share_key"] != key {
		t.Fatalf("the resumed session shares under %v, want %v", rh["share_key"], key)
	}
	id := r.ack(map[string]any{"op": "step", "n": 5})
	r.frameAfter(id)
	got := f.until("a frame of the resumed session", 10*time.Second, func(m msg) bool { return m.typ() == "frame" && num64(m.frame["iter"]) == 15 }).frame
	if num64(got["seq"]) <= num64(last["seq"]) {
		t.Errorf("the resumed session's frame has seq %v, not after %v", got["seq"], last["seq"])
	}
	late.until("the resumed session's frame (late follower)", 10*time.Second, func(m msg) bool { return m.typ() == "frame" && num64(m.frame["iter"]) == 15 })
	// A new follower gets the history from iteration 0.
	n := e.dial(t, "follow="+key)
	h := n.until("history", 10*time.Second, func(m msg) bool { return m.typ() == "history" }).frame
	if its := floats(h["iters"]); len(its) == 0 || its[0] != 0 || its[len(its)-1] < 10 {
		t.Errorf("the history after the resume: iterations %v, want 0 … ≥ 10", its)
	}
	// The view's messages reach followers too.
	r.ack(map[string]any{"op": "fit_density", "samples": 100})
	f.until("the presenter's fit density", 30*time.Second, func(m msg) bool { return m.typ() == "fit_density" })
	later := e.dial(t, "follow="+key)
	later.until("the fit density for a follower who joins after", 10*time.Second, func(m msg) bool { return m.typ() == "fit_density" })
}

// TestWatchRepair: with watch_repair on, an edit's repair runs at the
// session's speed from its first iteration — the frames do not say fast,
// and the iterations in a second after the edit are about the speed —,
// where without it the repair runs fast until the bound settles.
func TestWatchRepair(t *testing.T) {
	e := newEnv(t, nil)
	const speed = 20
	c := e.dial(t, strings.Replace(small, "speed=0", "speed=20", 1)+"&play=1")
	f := stopped(t, c)
	c.ack(map[string]any{"op": "speed", "watch_repair": true})
	// An inducing input moved: the optimizer must move it back (a pull of
	// this one-layer model's q(u) is undone at once: it is kept optimal).
	z := num64(get(f, "layers", 0, "z").([]float64)[1])
	id := c.send(map[string]any{"op": "move", "layer": 0, "index": 1, "z": []float64{z + 0.5}})
	fe := c.frameAfter(id)
	it0 := num64(fe["iter"])
	start := time.Now()
	var fast bool
	var last wire.Decoded
	c.until("a second of the repair", 30*time.Second, func(m msg) bool {
		if m.typ() != "frame" {
			return false
		}
		last = m.frame
		fast = fast || get(m.frame, "optimizer", "fast") == true
		return time.Since(start) > time.Second || m.frame["running"] != true
	})
	if last["running"] != true {
		t.Fatalf("the repair stopped after %v iterations: %v", num64(last["iter"])-it0, get(last, "optimizer"))
	}
	its := num64(last["iter"]) - it0
	secs := time.Since(start).Seconds()
	t.Logf("watched repair: %v iterations in %.2f s at speed %d", its, secs, speed)
	if fast {
		t.Error("a watched repair's frames say fast")
	}
	if its > speed*secs+5 {
		t.Errorf("a watched repair ran %v iterations in %.2f s, more than the speed (%d/s) allows", its, secs, speed)
	}
	// Off again: the next edit's repair runs fast.
	c.ack(map[string]any{"op": "speed", "watch_repair": false})
	id = c.send(map[string]any{"op": "move", "layer": 0, "index": 1, "z": []float64{z - 0.5}})
	if fe := c.frameAfter(id); fe["running"] == true && get(fe, "optimizer", "fast") != true {
		t.Errorf("without watch_repair the repair's first frame is not fast: %v", get(fe, "optimizer"))
	}
}
