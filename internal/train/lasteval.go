package train

import (
	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// Evaluation is a copy of a trainer's last full-data evaluation of the
// model as it stands: the bound, each layer's terms (without the per-datum
// penalties) and the messages out of every layer but the last.
type Evaluation struct {
	Bound, Likelihood float64
	Layers            []engine.LayerTerms
	Hidden            []engine.Message
}

// LastEvaluation returns a copy of the last full-data evaluation when the
// model is still at the parameters it evaluated (the point the last step
// accepted), so that a live view can show the bound and the hidden layers
// without evaluating again; ok is false after an edit, a new model or
// configuration, a reverted or minibatch step, or before any step. The
// copy is the caller's; it costs the hidden layers' messages (N × width).
func (t *Trainer) LastEvaluation() (ev *Evaluation, ok bool) {
	if !t.evalOK || t.lastRes == nil {
		return nil, false
	}
	r := t.lastRes
	ev = &Evaluation{Bound: r.Bound, Likelihood: r.Likelihood}
	for _, l := range r.Layers {
		ev.Layers = append(ev.Layers, engine.LayerTerms{KL: l.KL, Compression: l.Compression, Propagation: l.Propagation})
	}
	for i := 0; i+1 < len(r.Messages); i++ {
		m := r.Messages[i]
		msg := engine.Message{Mean: mat.DenseCopyOf(m.Mean)}
		if m.Var != nil {
			msg.Var = mat.DenseCopyOf(m.Var)
		}
		ev.Hidden = append(ev.Hidden, msg)
	}
	return ev, true
}
