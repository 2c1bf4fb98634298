package stream

import (
	"strconv"

	"dgpviz/internal/engine"
)

// freyArrayMax is the largest inducing array (m·q for z, m·d for u) a
// Frey frame carries: the decoder's inducing inputs (15 × 2) are drawn and
// dragged, but the encoder's (15 × 560) and the decoder's inducing
// outputs (15 × 560) are not shown and are left out.
const freyArrayMax = 8 * 64

// freyFrame is the frame's "frey" section.
type freyFrame struct {
	// EvalIter is the iteration the bound and the terms belong to (an
	// analysis at most every robotAnalysisEvery while running; at once
	// after a command or when paused).
	EvalIter int `json:"eval_iter"`
	// Omitted lists the layer arrays left out because of their size, as
	// "layer.field" (e.g. "0.z", "1.u_mean"): sent as empty arrays.
	Omitted []string `json:"omitted"`
	// Source says where the bound and the latent come from: "optimizer"
	// (its evaluation of this very model, while it runs) or "analysis" (an
	// evaluation by the frame writer, after a command or when paused).
	Source string `json:"source"`
}

// freyAnalyze evaluates the bound and its terms (no output variance; the
// N × 560 output messages are computed by the engine but never sent).
func freyAnalyze(m *engine.Model, iter int, applied int64) *robotAnalysis {
	ev := engine.Evaluator{Workers: 1}
	a := &robotAnalysis{iter: iter, applied: applied}
	a.res, _, a.err = ev.Evaluate(m, engine.Options{NoOutputMessage: true})
	if a.err != nil {
		a.res = nil
	}
	return a
}

// freyFrame builds a frame for the Frey faces (frey.go): the bound, its
// terms and the hidden layers' messages from the optimizer's own
// evaluation of the snapshot's model when it has one (while it runs), else
// from an analysis (robotFramer.current: at once after a command or when
// paused, in the background otherwise) and a forward pass through the
// encoder; and each layer's parameters except the arrays of 560 columns.
func (f *framer) freyFrame(s *snapshot) ([]byte, error) {
	m := s.model
	nl := len(m.Layers)
	h := f.header(s)
	var e encoder
	ff := &freyFrame{Omitted: []string{}}
	var terms []engine.LayerTerms
	var hidden []engine.Message
	if ev := s.eval; ev != nil && len(ev.Hidden) == nl-1 && len(ev.Layers) == nl {
		// The optimizer's own evaluation of this model (train.Trainer.
		// LastEvaluation): nothing to compute.
		h.Bound, h.Likelihood = numPtr(ev.Bound), numPtr(ev.Likelihood)
		terms, hidden, ff.EvalIter, ff.Source = ev.Layers, ev.Hidden, s.iter, "optimizer"
	} else {
		if f.fry == nil {
			f.fry = &robotFramer{}
		}
		a := f.fry.current(s, freyAnalyze)
		ff.EvalIter, ff.Source = a.iter, "analysis"
		if a.err != nil {
			h.EvalError = a.err.Error()
		} else {
			h.Bound, h.Likelihood = numPtr(a.res.Bound), numPtr(a.res.Likelihood)
			terms = a.res.Layers
		}
		if nl > 1 {
			if msgs, err := f.ev.PredictLayers(m, m.X, nl-1); err == nil {
				hidden = msgs
			}
		}
	}
	empty := e.arr(nil)
	for i, l := range m.Layers {
		mz, q, d := l.Dims()
		lf := layerParamsSized(&e, l, mz*q <= freyArrayMax, mz*d <= freyArrayMax)
		if mz*q > freyArrayMax {
			lf.Z = empty
			ff.Omitted = append(ff.Omitted, strconv.Itoa(i)+".z")
		}
		if mz*d > freyArrayMax {
			lf.UMean, lf.UVar = empty, empty
			ff.Omitted = append(ff.Omitted, strconv.Itoa(i)+".u_mean", strconv.Itoa(i)+".u_var")
		}
		if i < len(terms) {
			t := terms[i]
			lf.KL, lf.Compression, lf.Propagation = numPtr(t.KL), numPtr(t.Compression), numPtr(t.Propagation)
		}
		if i < len(hidden) {
			mean, vr := e.arr(hidden[i].Mean.RawMatrix().Data), e.arr(hidden[i].Var.RawMatrix().Data)
			lf.Mean, lf.Var = &mean, &vr
		}
		h.Layers = append(h.Layers, lf)
	}
	h.Frey = ff
	return e.finish(h)
}
