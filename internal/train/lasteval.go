package train

import (
	"slices"

	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// Evaluation is a private copy of a full-data evaluation of a model: the
// bound, each layer's terms with their per-datum penalties, and the
// messages out of every layer but the last.
type Evaluation struct {
	Bound, Likelihood float64
	Layers            []engine.LayerTerms
	Hidden            []engine.Message
}

// NewEvaluation copies what a live view shows of r, an evaluation of all
// the data. It costs the per-datum penalties and the hidden layers'
// messages (N × width each).
func NewEvaluation(r *engine.Result) *Evaluation {
	ev := &Evaluation{Bound: r.Bound, Likelihood: r.Likelihood}
	for _, l := range r.Layers {
		ev.Layers = append(ev.Layers, engine.LayerTerms{KL: l.KL, Compression: l.Compression, Propagation: l.Propagation,
			CompressionPerDatum: slices.Clone(l.CompressionPerDatum), PropagationPerDatum: slices.Clone(l.PropagationPerDatum)})
	}
	for i := 0; i+1 < len(r.Messages); i++ {
		m := r.Messages[i]
		msg := engine.Message{Mean: mat.DenseCopyOf(m.Mean)}
		if m.Var != nil {
			msg.Var = mat.DenseCopyOf(m.Var)
		}
		ev.Hidden = append(ev.Hidden, msg)
	}
	return ev
}

// LastEvaluation returns a copy of the last full-data evaluation when the
// model is still at the parameters it evaluated (the point the last step
// accepted), so that a live view can show the bound, the penalties and
// the hidden layers without evaluating again; ok is false after an edit,
// a new model or configuration, a reverted or minibatch step, or before
// any step.
func (t *Trainer) LastEvaluation() (ev *Evaluation, ok bool) {
	// An evaluation of shards on other processes (TrainerConfig.Evaluator)
	// has no per-datum penalties or messages to show: ok is false.
	if !t.evalOK || t.lastRes == nil || len(t.lastRes.Layers) == 0 || t.lastRes.Layers[0].CompressionPerDatum == nil {
		return nil, false
	}
	return NewEvaluation(t.lastRes), true
}

// Evaluation is the trainer's evaluation of its model as it stands, for a
// live view: the last step's (LastEvaluation) when the model is still
// where that step left it, else — after an edit, a new model or a
// reverted step — one made now on every row, without the last layer's
// message.
func (t *Trainer) Evaluation() (*Evaluation, error) {
	if ev, ok := t.LastEvaluation(); ok {
		return ev, nil
	}
	t.shown.Workers = t.cfg.Workers
	res, _, err := t.shown.EvaluateAll(t.m, engine.Options{NoOutputMessage: true})
	if err != nil {
		return nil, err
	}
	return NewEvaluation(res), nil
}
