package stream

import (
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/share"
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
	p := e.dial(t, paused)
	key, _ := p.until("hello", 5*time.Second, func(m msg) bool { return m.typ() == "hello" }).text["share_key"].(string)
	bounds := map[float64]float64{} // iteration → bound, from the presenter's frames
	for range 3 {
		f := p.frameAfter(p.ack(map[string]any{"op": "step", "n": 4}))
		bounds[num64(f["iter"])] = num64(f["bound"])
	}
	p.send(map[string]any{"op": "present", "present": true, "scale": 1.7, "slide": "lesson:paper/3"})
	r := p.reply(p.send(map[string]any{"op": "present", "present": true, "scale": 9}))
	if s, _ := r["error"].(string); r["type"] != "error" || !strings.Contains(s, "scale") {
		t.Errorf("present with scale 9: %v, want an error naming the scale", r)
	}

	f := e.dial(t, "follow="+key)
	var order []string
	var hist wire.Decoded
	var pres map[string]any
	f.until("the first frame", 10*time.Second, func(m msg) bool {
		order = append(order, m.typ())
		switch m.typ() {
		case "history":
			hist = m.frame
		case "presentation":
			pres = m.text
		}
		return m.typ() == "frame"
	})
	if got := strings.Join(order, " "); got != "hello setup history presentation frame" {
		t.Errorf("a late follower got %q, want hello setup history presentation frame", got)
	}
	if pres["present"] != true || num64(pres["scale"]) != 1.7 || pres["slide"] != "lesson:paper/3" {
		t.Errorf("presentation %v, want present at 1.7 on slide lesson:paper/3", pres)
	}
	iters, bs := floats(hist["iters"]), floats(hist["bounds"])
	if len(iters) < 3 || iters[0] != 0 || int(num64(hist["layer_count"])) != 3 || len(floats(hist["kl"])) != 3*len(iters) {
		t.Fatalf("history: iterations %v, %v layers, %d KL values; want it from iteration 0 with 3 layers", iters, hist["layer_count"], len(floats(hist["kl"])))
	}
	for k, it := range iters {
		if b, ok := bounds[it]; ok && math.Abs(bs[k]-b) > 1e-6*math.Abs(b)+1e-6 { // float32
			t.Errorf("history's bound at iteration %v is %v, the frame's %v", it, bs[k], b)
		}
	}
	p.send(map[string]any{"op": "present", "present": false, "scale": 1.2})
	m := f.until("the new presentation", 5*time.Second, func(m msg) bool { return m.typ() == "presentation" })
	if m.text["present"] != false || num64(m.text["scale"]) != 1.2 || m.text["slide"] != "" {
		t.Errorf("presentation %v, want not presenting at 1.2", m.text)
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
