package stream

import (
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"dgpviz/internal/dataset"
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

// frameHead is a frame header for the history's rules.
func frameHead(iter int, bound float64, layers int) feedHeader {
	h := feedHeader{Type: "frame", Iter: iter, Bound: &bound, Likelihood: &bound}
	for range layers {
		kl := 0.5
		h.Layers = append(h.Layers, layerTerms{KL: &kl})
	}
	return h
}

// TestHistoryFromHeaders: a relay's hub, which has only a frame's bytes,
// adds the points the presenter's hub adds from the evaluation (null
// terms NaN, a frame without a bound no point), and the "history"
// message reads back as a relay reads it.
func TestHistoryFromHeaders(t *testing.T) {
	var h train.History
	h.Add(0, 2, evalOf(frameHead(0, -10, 2)))
	nb := frameHead(1, 0, 2)
	nb.Bound = nil
	if evalOf(nb) != nil {
		t.Fatal("a frame without a bound has an evaluation")
	}
	h.Add(1, 2, evalOf(nb))
	if h.Len() != 1 || h.Bound[0] != -10 || h.KL[1] != 0.5 || !math.IsNaN(h.Compression[0]) {
		t.Fatalf("points %v bounds %v KL %v compression %v, want one at -10, KL 0.5, compression NaN", h.Iter, h.Bound, h.KL, h.Compression)
	}
	for i := 2; i < 40; i++ {
		h.Add(i, 2, evalOf(frameHead(i, float64(i), 2)))
	}
	got, dataID, err := decodeHistory(encodeHistory(&h, 7))
	if err != nil || dataID != 7 || got.Len() != h.Len() || got.Layers != 2 || got.Iter[7] != h.Iter[7] || got.Bound[9] != h.Bound[9] || got.KL[13] != h.KL[13] || !math.IsNaN(got.Propagation[3]) {
		t.Errorf("history read back: %v, data %d, %d points of %d layers", err, dataID, got.Len(), got.Layers)
	}
}

// BenchmarkHubFrame is what a hub costs the presenter's writer per frame
// with no followers: reading the frame's header for the bound history. It
// reports the process's CPU time per frame too ("cpu-ns/op"), which a
// busy shared machine inflates less than the wall time.
func BenchmarkHubFrame(b *testing.B) {
	var f framer
	frame, err := f.frame(publicationFor(b, dataset.Step(), train.InitConfig{Hidden: []int{1, 1}, Inducing: 12, Seed: 1}, 20))
	if err != nil {
		b.Fatal(err)
	}
	h := newHub()
	cpu0 := processCPU()
	for b.Loop() {
		h.hist.Reset()
		h.frame = seqFrame{}
		h.Frame(frame, 1)
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
