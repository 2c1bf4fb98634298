package train

import (
	"math"
	"testing"

	"dgpviz/internal/engine"
)

// point is an evaluation of bound b (its likelihood too) with each of
// layers layers' KL 0.5 and its other terms absent (NaN).
func point(b float64, layers int) *Evaluation {
	ev := &Evaluation{Bound: b, Likelihood: b}
	for range layers {
		ev.Layers = append(ev.Layers, engine.LayerTerms{KL: 0.5, Compression: math.NaN(), Propagation: math.Inf(1)})
	}
	return ev
}

// TestHistoryRules: the page's rules (static/app.js) — a point per
// iteration, the same iteration replaced, a new run or another number of
// layers starts again, models without an evaluation are skipped — and
// past MaxHistory every other point goes, the last kept.
func TestHistoryRules(t *testing.T) {
	var h History
	h.Add(0, 2, point(-10, 2))
	h.Add(1, 2, point(-9, 2))
	h.Add(1, 2, point(-8, 2)) // replaces
	h.Add(2, 2, nil)          // no evaluation: skipped
	h.Add(3, 2, point(math.NaN(), 2))
	if h.Len() != 2 || h.Bound[1] != -8 || len(h.KL) != 2*2 || h.KL[3] != 0.5 || !math.IsNaN(h.Compression[1]) || !math.IsNaN(h.Propagation[0]) {
		t.Fatalf("after 0, 1, 1 again and two without a bound: iterations %v bounds %v KL %v", h.Iter, h.Bound, h.KL)
	}
	h.Add(5, 3, point(-7, 3)) // another architecture
	if h.Len() != 1 || h.Layers != 3 {
		t.Errorf("a new architecture kept %d points of %d layers", h.Len(), h.Layers)
	}
	h.Add(2, 3, point(-7, 3)) // a reset: the iteration goes back
	if h.Len() != 1 || h.Iter[0] != 2 {
		t.Errorf("a reset kept %v", h.Iter)
	}
	c := h.Clone()
	h.Reset()
	if c.Len() != 1 || c.Iter[0] != 2 {
		t.Errorf("a clone changed with its history: %v", c.Iter)
	}
	for i := range MaxHistory + 1 {
		h.Add(i, 1, point(float64(i), 1))
	}
	// 2001 points decimated: the even iterations 0…2000 (1001 points).
	if h.Len() != MaxHistory/2+1 || h.Iter[1] != 2 || h.Iter[h.Len()-1] != MaxHistory || len(h.KL) != h.Len() || h.Bound[500] != 1000 {
		t.Errorf("decimated to %d points, %v … %v", h.Len(), h.Iter[:3], h.Iter[h.Len()-1])
	}
}
