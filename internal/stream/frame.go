package stream

import (
	"dgpviz/internal/view"
	"dgpviz/internal/wire"
)

// ProtocolVersion is the version of the websocket protocol in
// docs/protocol.md (wire.Version).
const ProtocolVersion = wire.Version

type optState struct {
	Method       string   `json:"method"`
	LearningRate wire.Num `json:"learning_rate"`
	Frozen       []string `json:"frozen"`
	Event        string   `json:"event"`
	Converged    bool     `json:"converged"`
	Status       string   `json:"status"`  // train.Status in words: "not terminated", "gradient threshold", …
	Explain      string   `json:"explain"` // what the status means, for people (train.Status.Explain)
	Fast         bool     `json:"fast"`    // running as fast as it can until the bound settles (train.Settler)
	// A stochastic fit (method svi): the steps' bound is a minibatch
	// estimate, the frame's bound the last full-data check's.
	Stochastic bool     `json:"stochastic"`
	Estimate   wire.Num `json:"estimate"` // the last step's minibatch estimate of the bound; null after a step on every row
	Epochs     wire.Num `json:"epochs"`   // passes over the data the minibatches made (0 for a full-batch fit)
	// Workers counts the worker processes (viz worker) whose shards the
	// last evaluation summed: 0 for a fit in the server.
	Workers int `json:"workers"`
}

// frameHeader is a frame: the optimizer's state, the bound, every layer
// and the view's own section (docs/protocol.md, "Frames").
type frameHeader struct {
	V          int                 `json:"v"`
	Type       string              `json:"type"`
	Seq        uint64              `json:"seq"`
	Applied    int64               `json:"applied"`
	DataID     int                 `json:"data_id"`
	Iter       int                 `json:"iter"`
	Running    bool                `json:"running"`
	Paused     bool                `json:"paused"` // a person paused the optimizer (else it stopped by itself)
	Held       bool                `json:"held"`   // a drag holds it
	IPS        wire.Num            `json:"ips"`
	Followers  int                 `json:"followers"` // read-only followers watching (follow.go)
	Optimizer  optState            `json:"optimizer"`
	N          int                 `json:"n"`
	BoundIter  int                 `json:"bound_iter"` // the iteration of the model shown, whose bound, terms and layers these are: iter but between a stochastic fit's checks
	Bound      *wire.Num           `json:"bound,omitempty"`
	Likelihood *wire.Num           `json:"likelihood,omitempty"`
	EvalError  string              `json:"eval_error,omitempty"`
	Layers     []view.LayerFrame   `json:"layers"`
	View       any                 `json:"view,omitempty"`
	Restarts   *view.RestartsFrame `json:"restarts,omitempty"` // the preset's restarts (absent for one start)
	Edit       *editDelta          `json:"edit,omitempty"`     // the last edit's readout (edits.go)
	Collapse   *view.Collapse      `json:"collapse,omitempty"` // a collapsed layer (view.Diagnose)
	Sections   []wire.Section      `json:"sections"`
}

func (h *frameHeader) SetSections(s []wire.Section) { h.Sections = s }

// framer builds a connection's frames: the header from the publication,
// the layers and the view's section from the view's own framer. The
// connection's writer is its only user.
type framer struct {
	seq  uint64
	view view.View
	vf   view.Framer
}

// frame encodes the next frame of p.
func (f *framer) frame(p *publication) ([]byte, error) {
	if p.view != f.view { // a new data set's view
		f.view, f.vf = p.view, p.view.NewFramer()
	}
	f.seq++
	s := p.snap
	n, _ := s.Model.X.Dims()
	h := &frameHeader{
		V: ProtocolVersion, Type: "frame", Seq: f.seq, Applied: s.Applied, DataID: s.Data.ID,
		Iter: s.Iter, Running: s.Running, Paused: p.paused, Held: p.held, IPS: wire.Num(p.ips), N: n, Followers: p.followers,
		Optimizer: optState{Method: p.method, LearningRate: wire.Num(p.lr), Frozen: p.frozen, Event: p.event,
			Converged: p.status.Converged() && p.collapse == nil, Status: p.status.String(), Explain: p.status.Explain(), Fast: p.fast,
			Stochastic: p.stochastic, Estimate: wire.Num(p.estimate), Epochs: wire.Num(p.epochs), Workers: p.workers},
		BoundIter: p.modelIter,
		Restarts:  p.restarts.Frame(p.restart), Edit: p.edit, Collapse: p.collapse,
	}
	if h.Optimizer.Frozen == nil {
		h.Optimizer.Frozen = []string{}
	}
	if s.Eval != nil {
		h.Bound, h.Likelihood = wire.NumPtr(s.Eval.Bound), wire.NumPtr(s.Eval.Likelihood)
	} else if s.EvalErr != nil {
		h.EvalError = s.EvalErr.Error()
	}
	var e wire.Encoder
	h.Layers, h.View = f.vf.Frame(&e, s)
	return e.Finish(h)
}
