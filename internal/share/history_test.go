package share

import (
	"math"
	"testing"

	"dgpviz/internal/train"
)

// frameHead is a frame header for the history's rules.
func frameHead(iter int, bound float64, layers int) feedHeader {
	h := feedHeader{Type: "frame", Iter: iter, Bound: &bound, Likelihood: &bound}
	for range layers {
		kl := 0.5
		h.Layers = append(h.Layers, headerTerms{KL: &kl})
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
