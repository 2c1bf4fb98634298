package stream

import (
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/share"
	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/train"
	"dgpviz/internal/wire"
)

// TestLateFollowerGetsHistoryAndPresentation: a follower who joins after
// the presenter has stepped gets, before any frame, the bound history
// from the presenter's first frame (the bound at every iteration it
// framed, equal to the frames' to float32 precision) and the presenter's
// latest presentation state; later changes of the presentation reach it;
// a bad "present" is refused with an error naming the field.
func TestLateFollowerGetsHistoryAndPresentation(t *testing.T) {
	e := newEnv(t, nil)
	p := e.Dial(t, streamtest.Paused)
	key, _ := p.Until("hello", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "hello" }).Text["share_key"].(string)
	bounds := map[float64]float64{} // iteration → bound, from the presenter's frames
	for range 3 {
		f := p.FrameAfter(p.Ack(map[string]any{"op": "step", "n": 4}))
		bounds[streamtest.Num(f["iter"])] = streamtest.Num(f["bound"])
	}
	p.Send(map[string]any{"op": "present", "present": true, "scale": 1.7, "slide": "lesson:paper/3"})
	r := p.Reply(p.Send(map[string]any{"op": "present", "present": true, "scale": 9}))
	if s, _ := r["error"].(string); r["type"] != "error" || !strings.Contains(s, "scale") {
		t.Errorf("present with scale 9: %v, want an error naming the scale", r)
	}

	f := e.Dial(t, "follow="+key)
	var order []string
	var hist wire.Decoded
	var pres map[string]any
	f.Until("the first frame", 10*time.Second, func(m streamtest.Msg) bool {
		order = append(order, m.Type())
		switch m.Type() {
		case "history":
			hist = m.Frame
		case "presentation":
			pres = m.Text
		}
		return m.Type() == "frame"
	})
	if got := strings.Join(order, " "); got != "hello setup history presentation frame" {
		t.Errorf("a late follower got %q, want hello setup history presentation frame", got)
	}
	if pres["present"] != true || streamtest.Num(pres["scale"]) != 1.7 || pres["slide"] != "lesson:paper/3" {
		t.Errorf("presentation %v, want present at 1.7 on slide lesson:paper/3", pres)
	}
	iters, bs := streamtest.Floats(hist["iters"]), streamtest.Floats(hist["bounds"])
	if len(iters) < 3 || iters[0] != 0 || int(streamtest.Num(hist["layer_count"])) != 3 || len(streamtest.Floats(hist["kl"])) != 3*len(iters) {
		t.Fatalf("history: iterations %v, %v layers, %d KL values; want it from iteration 0 with 3 layers", iters, hist["layer_count"], len(streamtest.Floats(hist["kl"])))
	}
	for k, it := range iters {
		if b, ok := bounds[it]; ok && math.Abs(bs[k]-b) > 1e-6*math.Abs(b)+1e-6 { // float32
			t.Errorf("history's bound at iteration %v is %v, the frame's %v", it, bs[k], b)
		}
	}
	p.Send(map[string]any{"op": "present", "present": false, "scale": 1.2})
	m := f.Until("the new presentation", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "presentation" })
	if m.Text["present"] != false || streamtest.Num(m.Text["scale"]) != 1.2 || m.Text["slide"] != "" {
		t.Errorf("presentation %v, want not presenting at 1.2", m.Text)
	}
}

// BenchmarkHubFrame is what a hub costs the presenter's writer per frame
// with no followers: the bound history's point, from the published
// evaluation (the frame's header is not read back). It reports the
// process's CPU time per frame too ("cpu-ns/op"), which a busy shared
// machine inflates less than the wall time.
func BenchmarkHubFrame(b *testing.B) {
	var f framer
	p := publicationFor(b, dataset.Step(), train.InitConfig{Hidden: []int{1, 1}, Inducing: 12, Seed: 1}, 20)
	frame, err := f.frame(p)
	if err != nil {
		b.Fatal(err)
	}
	h := share.NewHub(newResumeToken())
	s := p.snap
	cpu0 := processCPU()
	seq := uint64(0)
	for b.Loop() {
		seq++
		h.PublishFrame(frame, seq, s.Data.ID, s.Iter+int(seq), len(s.Model.Layers), s.Eval)
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(len(frame)), "bytes/frame")
}

// processCPU is the process's user and system CPU time (ns).
func processCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
