package view

import (
	"dgpviz/internal/train"
	"dgpviz/internal/wire"
)

// An edit's readout: the bound and its terms just before and just after
// an edit, from the optimizer's own evaluations of the two models, so
// that the page shows what the edit itself did, frozen at that moment,
// and the optimizer's recovery beside it (docs/protocol.md, "edit"). The
// transport records it for every edit, its own and the views' ops'.

// BoundTerms is a model's bound and its terms (nats), layer by layer.
type BoundTerms struct {
	Bound       wire.Num   `json:"bound"`
	Likelihood  wire.Num   `json:"likelihood"`
	KL          []wire.Num `json:"kl"`
	Compression []wire.Num `json:"compression"`
	Propagation []wire.Num `json:"propagation"`
}

// BoundTermsOf returns ev's terms, nil without an evaluation.
func BoundTermsOf(ev *train.Evaluation) *BoundTerms {
	if ev == nil {
		return nil
	}
	t := &BoundTerms{Bound: wire.Num(ev.Bound), Likelihood: wire.Num(ev.Likelihood)}
	for _, l := range ev.Layers {
		t.KL = append(t.KL, wire.Num(l.KL))
		t.Compression = append(t.Compression, wire.Num(l.Compression))
		t.Propagation = append(t.Propagation, wire.Num(l.Propagation))
	}
	return t
}

// EditReadout is the last edit's readout (frames' "edit").
type EditReadout struct {
	Seq      int         `json:"seq"`   // edits of this session, from 1; a drag is one
	Label    string      `json:"label"` // "move of inducing point 6 of layer 1", "undo of the …"
	Layer    int         `json:"layer"` // the layer edited (0-based; -1: none in particular)
	DataEdit bool        `json:"data"`  // the data points were edited
	Iter     int         `json:"iter"`  // the iteration it was made at
	Before   *BoundTerms `json:"before,omitempty"`
	After    *BoundTerms `json:"after,omitempty"` // absent: the edited model cannot be evaluated
}
