package stream

import (
	"dgpviz/internal/wire"

	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// The bound history a follower gets when it joins: the chart of the
// bound panel from the start of the run, not from the moment the
// follower came. A Hub keeps it from the frames it fans out, by the
// page's own rules (static/app.js): a new data set (a setup that is not
// an edit of the points), a new architecture (another number of layers)
// or a new run (the iteration going back) starts it again; a frame at
// the last point's iteration replaces it. Past MaxHistory points every
// other point is dropped, the last kept, so a long lecture's history
// stays a few hundred kB.

// MaxHistory bounds a hub's bound history (points).
const MaxHistory = 2000

// feedHeader is what a hub reads from a setup or a frame's header.
type feedHeader struct {
	V          int            `json:"v"`
	Type       string         `json:"type"`
	Seq        uint64         `json:"seq"`     // frame
	DataID     int            `json:"data_id"` // setup, frame, history
	Name       string         `json:"name"`    // setup
	Edited     bool           `json:"edited"`  // setup
	Iter       int            `json:"iter"`    // frame
	Bound      *float64       `json:"bound"`   // frame; null or absent when it could not be evaluated
	Likelihood *float64       `json:"likelihood"`
	Layers     []layerTerms   `json:"layers"` // frame
	Sections   []wire.Section `json:"sections"`
}

type layerTerms struct {
	KL          *float64 `json:"kl"`
	Compression *float64 `json:"compression"`
	Propagation *float64 `json:"propagation"`
}

// parseFeedHeader checks binary message b's layout (docs/protocol.md:
// header length, a JSON header of this protocol version and type want,
// every section inside the payload) and returns its header. It trusts
// nothing: relays call it on what they read from NATS.
func parseFeedHeader(b []byte, want string) (feedHeader, error) {
	var h feedHeader
	if len(b) < 4 {
		return h, fmt.Errorf("a binary message of %d bytes is too short", len(b))
	}
	hl := uint64(binary.LittleEndian.Uint32(b))
	if hl > uint64(len(b)-4) || hl%4 != 0 {
		return h, fmt.Errorf("header length %d is invalid for a %d-byte message", hl, len(b))
	}
	if err := json.Unmarshal(b[4:4+hl], &h); err != nil {
		return h, fmt.Errorf("the header is not the JSON object of a %s: %v", want, err)
	}
	if h.V != ProtocolVersion {
		return h, fmt.Errorf("protocol version %d, want %d", h.V, ProtocolVersion)
	}
	if h.Type != want {
		return h, fmt.Errorf("a %q message where a %s was expected", truncate(h.Type, 40), want)
	}
	payload := uint64(len(b)) - 4 - hl
	for k, s := range h.Sections {
		var size uint64
		switch s.T {
		case "f32":
			size = 4
		case "q16":
			size = 2
		default:
			return h, fmt.Errorf("section %d has an unknown type %q", k+1, truncate(s.T, 20))
		}
		if s.N < 0 || s.O < 0 || s.O%4 != 0 || uint64(s.N) > payload || uint64(s.O)+size*uint64(s.N) > payload {
			return h, fmt.Errorf("section %d lies outside the message", k+1)
		}
	}
	return h, nil
}

// history is a session's bound history: per point the iteration, bound,
// likelihood and per layer the KL, compression and propagation (NaN:
// absent from the frame).
type history struct {
	dataID int // the data set it belongs to (the latest setup's data_id)
	layers int
	iter   []float64
	bound  []float64
	lik    []float64
	terms  []float64 // point-major, then layer, then the three terms
}

func (h *history) n() int { return len(h.iter) }

func (h *history) clear() {
	h.layers = 0
	h.iter, h.bound, h.lik, h.terms = h.iter[:0], h.bound[:0], h.lik[:0], h.terms[:0]
}

// add adds frame f's point and reports whether the history changed.
func (h *history) add(f feedHeader) bool {
	n := h.n()
	changed := false
	if n > 0 && (len(f.Layers) != h.layers || float64(f.Iter) < h.iter[n-1]) {
		h.clear()
		n, changed = 0, true
	}
	if f.Bound == nil {
		return changed
	}
	if n == 0 {
		h.layers = len(f.Layers)
	}
	lik := math.NaN()
	if f.Likelihood != nil {
		lik = *f.Likelihood
	}
	if n > 0 && h.iter[n-1] == float64(f.Iter) { // the same iteration again: the newer point
		h.iter, h.bound, h.lik = h.iter[:n-1], h.bound[:n-1], h.lik[:n-1]
		h.terms = h.terms[:(n-1)*3*h.layers]
	}
	h.iter = append(h.iter, float64(f.Iter))
	h.bound = append(h.bound, *f.Bound)
	h.lik = append(h.lik, lik)
	for _, l := range f.Layers {
		h.terms = append(h.terms, orNaN(l.KL), orNaN(l.Compression), orNaN(l.Propagation))
	}
	if h.n() > MaxHistory {
		h.decimate()
	}
	return true
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// decimate keeps every other point and the last.
func (h *history) decimate() {
	n, w := h.n(), 3*h.layers
	j := 0
	for k := 0; k < n; k++ {
		if k%2 != 0 && k != n-1 {
			continue
		}
		h.iter[j], h.bound[j], h.lik[j] = h.iter[k], h.bound[k], h.lik[k]
		copy(h.terms[j*w:(j+1)*w], h.terms[k*w:(k+1)*w])
		j++
	}
	h.iter, h.bound, h.lik, h.terms = h.iter[:j], h.bound[:j], h.lik[:j], h.terms[:j*w]
}

// historyHeader is the "history" message (docs/protocol.md, "Following").
type historyHeader struct {
	V           int            `json:"v"`
	Type        string         `json:"type"`
	DataID      int            `json:"data_id"`
	N           int            `json:"n"`
	Layers      int            `json:"layer_count"`
	Iter        wire.Ref       `json:"iters"`
	Bound       wire.Ref       `json:"bounds"`
	Likelihood  wire.Ref       `json:"likelihoods"`
	KL          wire.Ref       `json:"kl"`
	Compression wire.Ref       `json:"compression"`
	Propagation wire.Ref       `json:"propagation"`
	Sections    []wire.Section `json:"sections"`
}

func (h *historyHeader) SetSections(s []wire.Section) { h.Sections = s }

// encode returns the "history" message (float32: a chart's precision;
// never quantised, since one disastrous edit would flatten the rest).
func (h *history) encode() []byte {
	n, l := h.n(), h.layers
	kl, comp, prop := make([]float64, n*l), make([]float64, n*l), make([]float64, n*l)
	for k := range n * l {
		kl[k], comp[k], prop[k] = h.terms[3*k], h.terms[3*k+1], h.terms[3*k+2]
	}
	e := wire.Encoder{ForceF32: true}
	hd := &historyHeader{V: ProtocolVersion, Type: "history", DataID: h.dataID, N: n, Layers: l,
		Iter: e.Arr(h.iter), Bound: e.Arr(h.bound), Likelihood: e.Arr(h.lik), KL: e.Arr(kl), Compression: e.Arr(comp), Propagation: e.Arr(prop)}
	b, err := e.Finish(hd)
	if err != nil { // cannot happen: every field marshals
		return nil
	}
	return b
}

// decodeHistory reads a "history" message (a relay's snapshot). It trusts
// nothing: the counts must match the sections, which must lie inside b.
func decodeHistory(b []byte) (history, error) {
	var h history
	if _, err := parseFeedHeader(b, "history"); err != nil {
		return h, err
	}
	hl := binary.LittleEndian.Uint32(b)
	var hd historyHeader
	if err := json.Unmarshal(b[4:4+hl], &hd); err != nil {
		return h, fmt.Errorf("history: %v", err)
	}
	if hd.N < 0 || hd.N > MaxHistory || hd.Layers < 0 || hd.Layers > 1000 {
		return h, fmt.Errorf("history of %d points of %d layers is out of range", hd.N, hd.Layers)
	}
	payload := b[4+hl:]
	read := func(r wire.Ref, n int) ([]float64, error) {
		if r.I < 0 || r.I >= len(hd.Sections) || hd.Sections[r.I].T != "f32" || hd.Sections[r.I].N != n {
			return nil, fmt.Errorf("history: section %d is not %d float32 values", r.I, n)
		}
		out := make([]float64, n)
		o := hd.Sections[r.I].O
		for i := range out {
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(payload[o+4*i:])))
		}
		return out, nil
	}
	var err error
	n, l := hd.N, hd.Layers
	if h.iter, err = read(hd.Iter, n); err != nil {
		return h, err
	}
	if h.bound, err = read(hd.Bound, n); err != nil {
		return h, err
	}
	if h.lik, err = read(hd.Likelihood, n); err != nil {
		return h, err
	}
	var terms [3][]float64
	for t, r := range []wire.Ref{hd.KL, hd.Compression, hd.Propagation} {
		if terms[t], err = read(r, n*l); err != nil {
			return h, err
		}
	}
	h.terms = make([]float64, 0, 3*n*l)
	for k := range n * l {
		h.terms = append(h.terms, terms[0][k], terms[1][k], terms[2][k])
	}
	h.dataID, h.layers = hd.DataID, l
	return h, nil
}
