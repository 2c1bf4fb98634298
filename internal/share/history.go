package share

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"dgpviz/internal/engine"
	"dgpviz/internal/train"
	"dgpviz/internal/wire"
)

// The bound history a follower gets when it joins: the chart of the
// bound panel from the start of the run, not from the moment the
// follower came. A Hub keeps it (a train.History, by the page's own
// rules) from the points of the frames it fans out: the presenter's
// writer hands it the published evaluation (Hub.publishFrame), a relay
// the values of the frame's header it has checked. A new data set (a
// setup that is not an edit of the points) starts it again.

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
	Layers     []headerTerms  `json:"layers"` // frame
	Sections   []wire.Section `json:"sections"`
}

type headerTerms struct {
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
	if h.V != wire.Version {
		return h, fmt.Errorf("protocol version %d, want %d", h.V, wire.Version)
	}
	if h.Type != want {
		return h, fmt.Errorf("a %q message where a %s was expected", wire.Truncate(h.Type, 40), want)
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
			return h, fmt.Errorf("section %d has an unknown type %q", k+1, wire.Truncate(s.T, 20))
		}
		if s.N < 0 || s.O < 0 || s.O%4 != 0 || uint64(s.N) > payload || uint64(s.O)+size*uint64(s.N) > payload {
			return h, fmt.Errorf("section %d lies outside the message", k+1)
		}
	}
	return h, nil
}

// MaxHistory is the bound history's cap (train.MaxHistory), which every
// hello carries as max_history: the page keeps its chart to it.
const MaxHistory = train.MaxHistory

// evalOf is the evaluation a frame's header shows (nil: none), for the
// bound history: the bound, the likelihood and each layer's terms, NaN
// where the frame carries null.
func evalOf(f feedHeader) *train.Evaluation {
	if f.Bound == nil {
		return nil
	}
	ev := &train.Evaluation{Bound: *f.Bound, Likelihood: orNaN(f.Likelihood)}
	for _, l := range f.Layers {
		ev.Layers = append(ev.Layers, engine.LayerTerms{KL: orNaN(l.KL), Compression: orNaN(l.Compression), Propagation: orNaN(l.Propagation)})
	}
	return ev
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
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

// encodeHistory returns the "history" message of h, the bound history of
// data set dataID (float32: a chart's precision; never quantised, since
// one disastrous edit would flatten the rest).
func encodeHistory(h *train.History, dataID int) []byte {
	e := wire.Encoder{ForceF32: true}
	hd := &historyHeader{V: wire.Version, Type: "history", DataID: dataID, N: h.Len(), Layers: h.Layers,
		Iter: e.Arr(h.Iter), Bound: e.Arr(h.Bound), Likelihood: e.Arr(h.Likelihood), KL: e.Arr(h.KL), Compression: e.Arr(h.Compression), Propagation: e.Arr(h.Propagation)}
	b, err := e.Finish(hd)
	if err != nil { // cannot happen: every field marshals
		return nil
	}
	return b
}

// decodeHistory reads a "history" message (a relay's snapshot) and returns
// the history and its data set. It trusts nothing: the counts must match
// the sections, which must lie inside b.
func decodeHistory(b []byte) (h train.History, dataID int, err error) {
	if _, err := parseFeedHeader(b, "history"); err != nil {
		return h, 0, err
	}
	hl := binary.LittleEndian.Uint32(b)
	var hd historyHeader
	if err := json.Unmarshal(b[4:4+hl], &hd); err != nil {
		return h, 0, fmt.Errorf("history: %v", err)
	}
	if hd.N < 0 || hd.N > train.MaxHistory || hd.Layers < 0 || hd.Layers > 1000 {
		return h, 0, fmt.Errorf("history of %d points of %d layers is out of range", hd.N, hd.Layers)
	}
	payload := b[4+hl:]
	read := func(r wire.Ref, n int) ([]float64, error) {
		if r.I < 0 || r.I >= len(hd.Sections) || hd.Sections[r.I].T != "f32" || hd.Sections[r.I].N != n {
			return nil, fmt.Errorf("history: section %d is not %d values of type f32", r.I+1, n)
		}
		out := make([]float64, n)
		o := hd.Sections[r.I].O
		for i := range out {
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(payload[o+4*i:])))
		}
		return out, nil
	}
	n, l := hd.N, hd.Layers
	for _, f := range []struct {
		r   wire.Ref
		n   int
		dst *[]float64
	}{{hd.Iter, n, &h.Iter}, {hd.Bound, n, &h.Bound}, {hd.Likelihood, n, &h.Likelihood},
		{hd.KL, n * l, &h.KL}, {hd.Compression, n * l, &h.Compression}, {hd.Propagation, n * l, &h.Propagation}} {
		if *f.dst, err = read(f.r, f.n); err != nil {
			return train.History{}, 0, err
		}
	}
	h.Layers = l
	return h, hd.DataID, nil
}
