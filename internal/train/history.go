package train

import "math"

// MaxHistory bounds a History (points). Past it every other point is
// dropped, the last kept, so that a long lecture's history stays a few
// hundred kB; the page keeps its own chart to the same bound (the hello
// message's max_history, docs/protocol.md).
const MaxHistory = 2000

// History is a fit's bound over iterations, as the bound panel draws it:
// per point the iteration, the bound and the likelihood, and per point
// and layer (point-major, Layers to a point) the three terms; NaN where
// a value is absent. Add keeps it by the page's rules (static/app.js): a
// new architecture (another number of layers) or a new run (the
// iteration going back) starts it again, and a point at the last point's
// iteration replaces that one.
type History struct {
	Layers                       int
	Iter, Bound, Likelihood      []float64
	KL, Compression, Propagation []float64
}

// Len is the number of points.
func (h *History) Len() int { return len(h.Iter) }

// Reset empties h, keeping its memory.
func (h *History) Reset() {
	h.Layers = 0
	h.Iter, h.Bound, h.Likelihood = h.Iter[:0], h.Bound[:0], h.Likelihood[:0]
	h.KL, h.Compression, h.Propagation = h.KL[:0], h.Compression[:0], h.Propagation[:0]
}

// Add adds the point of a model of layers layers at iteration iter, whose
// evaluation is ev (nil: it could not be evaluated, and there is no
// point; the rules that start the history again still apply). It
// reports whether h changed.
func (h *History) Add(iter, layers int, ev *Evaluation) bool {
	n := h.Len()
	changed := false
	if n > 0 && (layers != h.Layers || float64(iter) < h.Iter[n-1]) {
		h.Reset()
		n, changed = 0, true
	}
	if ev == nil || !finite(ev.Bound) {
		return changed
	}
	if n == 0 {
		h.Layers = layers
	}
	if n > 0 && h.Iter[n-1] == float64(iter) { // the same iteration again: the newer point
		h.truncate(n - 1)
	}
	h.Iter = append(h.Iter, float64(iter))
	h.Bound = append(h.Bound, ev.Bound)
	h.Likelihood = append(h.Likelihood, orNaN(ev.Likelihood))
	for l := range h.Layers {
		kl, comp, prop := math.NaN(), math.NaN(), math.NaN()
		if l < len(ev.Layers) {
			t := ev.Layers[l]
			kl, comp, prop = orNaN(t.KL), orNaN(t.Compression), orNaN(t.Propagation)
		}
		h.KL, h.Compression, h.Propagation = append(h.KL, kl), append(h.Compression, comp), append(h.Propagation, prop)
	}
	if h.Len() > MaxHistory {
		h.decimate()
	}
	return true
}

// truncate keeps the first n points.
func (h *History) truncate(n int) {
	w := n * h.Layers
	h.Iter, h.Bound, h.Likelihood = h.Iter[:n], h.Bound[:n], h.Likelihood[:n]
	h.KL, h.Compression, h.Propagation = h.KL[:w], h.Compression[:w], h.Propagation[:w]
}

// decimate keeps every other point and the last.
func (h *History) decimate() {
	n, w := h.Len(), h.Layers
	j := 0
	for k := 0; k < n; k++ {
		if k%2 != 0 && k != n-1 {
			continue
		}
		h.Iter[j], h.Bound[j], h.Likelihood[j] = h.Iter[k], h.Bound[k], h.Likelihood[k]
		copy(h.KL[j*w:(j+1)*w], h.KL[k*w:(k+1)*w])
		copy(h.Compression[j*w:(j+1)*w], h.Compression[k*w:(k+1)*w])
		copy(h.Propagation[j*w:(j+1)*w], h.Propagation[k*w:(k+1)*w])
		j++
	}
	h.truncate(j)
}

// Clone returns a copy of h that shares no memory with it.
func (h *History) Clone() *History {
	c := &History{Layers: h.Layers}
	c.Iter, c.Bound, c.Likelihood = append([]float64(nil), h.Iter...), append([]float64(nil), h.Bound...), append([]float64(nil), h.Likelihood...)
	c.KL, c.Compression, c.Propagation = append([]float64(nil), h.KL...), append([]float64(nil), h.Compression...), append([]float64(nil), h.Propagation...)
	return c
}

// finite reports whether v is a number a frame carries (non-finite
// values are sent as null).
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// orNaN is v, or NaN where a frame carries null.
func orNaN(v float64) float64 {
	if !finite(v) {
		return math.NaN()
	}
	return v
}
