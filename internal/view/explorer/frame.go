package explorer

import (
	"math"

	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"
)

// analysis is the part of a frame that the optimizer's evaluation does not
// give (latent.Analyze): the output layer's messages at the training and
// test rows, the hidden layers' at the test rows (where the model puts rows
// it never saw), the test error and the geometry scores. It runs at most
// every AnalysisEvery while the optimizer runs (view.Analysis).
func analyze(m *engine.Model, f *facts) *latent.Analysis {
	// One worker: frames must not compete with the optimizer.
	a, _ := latent.Analyze(m, f.geometry, f.heldOut, latent.AnalyzeOptions{Workers: 1, Messages: true})
	return a
}

// frameSection is the frame's "view" section.
type frameSection struct {
	Kind string `json:"kind"`
	// EvalIter is the iteration the output messages, the test predictions
	// and the scores belong to (the analysis's).
	EvalIter int `json:"eval_iter"`
	// Scores are the geometry scores of each hidden layer (null: no
	// ground truth, or not available).
	Scores []*wire.Num `json:"scores"`
	// ScoreErrors are the scores' standard errors, when the setup's
	// truth.sample says that they were estimated.
	ScoreErrors []*wire.Num `json:"score_errors,omitempty"`
	TestRMSE    *wire.Num   `json:"test_rmse,omitempty"` // original units
	MeanRMSE    *wire.Num   `json:"mean_rmse,omitempty"` // the training mean (a baseline)
	GP1RMSE     *wire.Num   `json:"gp1_rmse,omitempty"`  // a one-layer sparse GP (a baseline; absent until fitted)
	// NewOutput says that this frame carries the output layer's message
	// and the test messages of a new analysis (sent once per analysis).
	NewOutput  bool      `json:"new_output"`
	Test       *testSec  `json:"test,omitempty"`
	TestHidden []testSec `json:"test_hidden,omitempty"`
}

type testSec struct {
	N    int      `json:"n"`
	D    int      `json:"d"`
	Mean wire.Ref `json:"mean"`
	Var  wire.Ref `json:"var"`
}

func (v *View) NewFramer() view.Framer {
	return &framer{v: v, an: &view.Analysis[*latent.Analysis]{Every: AnalysisEvery}}
}

type framer struct {
	v       *View
	an      *view.Analysis[*latent.Analysis]
	sentSeq uint64 // the analysis whose arrays the last frame carried
}

func (fr *framer) Frame(e *wire.Encoder, s *view.Snapshot) ([]view.LayerFrame, any) {
	f := fr.v.factsOf(s.Data)
	a := fr.an.Current(s, func(s *view.Snapshot) *latent.Analysis { return analyze(s.Model, f) })
	layers, _ := view.BaseLayers(e, s, view.LayerOptions{})
	sec := &frameSection{Kind: Kind, EvalIter: a.Iter, Scores: []*wire.Num{}}
	an := a.Value
	sec.NewOutput = a.Seq != fr.sentSeq && an.Train != nil
	fr.sentSeq = a.Seq
	if sec.NewOutput {
		layers[len(layers)-1].SetMessage(e, an.Train[len(an.Train)-1])
		if t := an.Test; t != nil {
			sec.Test = encodeTest(e, t[len(t)-1])
			for _, h := range t[:len(t)-1] {
				sec.TestHidden = append(sec.TestHidden, *encodeTest(e, h))
			}
		}
	}
	for _, sc := range an.Scores {
		sec.Scores = append(sec.Scores, optional(sc.Value))
	}
	if len(an.Scores) > 0 && an.Scores[0].Sampled() { // all are on the same pairs
		for _, sc := range an.Scores {
			sec.ScoreErrors = append(sec.ScoreErrors, stdErr(sc))
		}
	}
	sec.TestRMSE = optional(an.TestRMSE)
	if f.heldOut != nil {
		sec.MeanRMSE = optional(f.heldOut.MeanRMSE)
		if g, ok := fr.v.gp1RMSE(f).Value(); ok {
			sec.GP1RMSE = optional(g.(float64))
		}
	}
	return layers, sec
}

func encodeTest(e *wire.Encoder, m engine.Message) *testSec {
	n, d := m.Mean.Dims()
	return &testSec{N: n, D: d, Mean: e.Arr(view.DenseData(m.Mean)), Var: e.Arr(view.DenseData(m.Var))}
}

// stdErr is s's standard error as a Num when s was estimated from
// samples, else nil.
func stdErr(s latent.Score) *wire.Num {
	if !s.Sampled() {
		return nil
	}
	return optional(s.StdErr)
}

// optional is v as a Num, or nil when v is not a number.
func optional(v float64) *wire.Num {
	if math.IsNaN(v) {
		return nil
	}
	return wire.NumPtr(v)
}
