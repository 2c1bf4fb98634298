package explorer

import (
	"math"

	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
	"dgpviz/internal/linalg"
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
	// Data shown by a sample of their rows (the setup's "sample"): the
	// layers' messages and the test messages are the sample's rows; the
	// scores, the test error and the densities are of every row, from a
	// pass at most every AllEvery (AllIter: the iteration it saw, absent
	// before the first). Density comes with a new pass only.
	AllIter *int           `json:"all_iter,omitempty"`
	Density []densityLayer `json:"density,omitempty"`
	// Collapsed says, for every hidden layer, which of its dimensions
	// have collapsed at the rows shown (latent.Collapsed), so that the
	// page marks them and does not stretch them to fill an axis.
	Collapsed [][]bool `json:"collapsed,omitempty"`
}

// densityLayer is one hidden layer's densities (Density), one per pair.
type densityLayer struct {
	Layer int           `json:"layer"` // counted from 0, as the frame's layers
	Pairs []densityPair `json:"pairs"`
}

type densityPair struct {
	A      int         `json:"a"`
	B      int         `json:"b"`
	G      int         `json:"g"`
	Lo     [2]wire.Num `json:"lo"`
	Hi     [2]wire.Num `json:"hi"`
	Rows   int         `json:"rows"`
	Counts wire.Ref    `json:"counts"` // g × g float32 counts, row by row from b's low end
}

type testSec struct {
	N    int      `json:"n"`
	D    int      `json:"d"`
	Mean wire.Ref `json:"mean"`
	Var  wire.Ref `json:"var"`
}

func (v *View) NewFramer() view.Framer {
	return &framer{v: v, an: &view.Analysis[*latent.Analysis]{Every: AnalysisEvery},
		all: &view.Analysis[*allRows]{Every: AllEvery, Background: true}}
}

type framer struct {
	v       *View
	an      *view.Analysis[*latent.Analysis]
	sentSeq uint64 // the analysis whose arrays the last frame carried
	all     *view.Analysis[*allRows]
	sentAll uint64 // the pass over all rows whose densities the last frame carried
}

func (fr *framer) Frame(e *wire.Encoder, s *view.Snapshot) ([]view.LayerFrame, any) {
	f := fr.v.factsOf(s.Data)
	if !f.sample.All() {
		return fr.sampled(e, s, f)
	}
	a := fr.an.Current(s, func(s *view.Snapshot) *latent.Analysis { return analyze(s.Model, f) })
	layers, _ := view.BaseLayers(e, s, view.LayerOptions{})
	sec := fr.outputs(e, layers, a)
	if ev := s.Eval; ev != nil {
		for _, h := range ev.Hidden {
			sec.Collapsed = append(sec.Collapsed, latent.Collapsed(h.Mean, h.Var))
		}
	}
	an := a.Value
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

// outputs starts a frame's section from the analysis a: when a is new,
// the output layer's message at the training rows shown goes into the
// last of layers, and every layer's at the held-out rows into the section.
func (fr *framer) outputs(e *wire.Encoder, layers []view.LayerFrame, a *view.Analyzed[*latent.Analysis]) *frameSection {
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
	return sec
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

// sampled is the frame of data shown by a sample of their rows: its cost
// is the sample's, whatever the number of rows; the pass over every row
// runs in the background (allRows).
func (fr *framer) sampled(e *wire.Encoder, s *view.Snapshot, f *facts) ([]view.LayerFrame, any) {
	smp := f.sample
	a := fr.an.Current(s, func(s *view.Snapshot) *latent.Analysis { return analyzeSample(s.Model, f) })
	var layers []view.LayerFrame
	var collapsed [][]bool
	for i, l := range s.Model.Layers {
		lf, _ := view.LayerParams(e, l, 0)
		if ev := s.Eval; ev != nil {
			if i < len(ev.Layers) {
				t := ev.Layers[i]
				lf.SetTerms(e, t, false)
				comp, prop := e.Arr(pick(t.CompressionPerDatum, 1, smp.Train)), e.Arr(pick(t.PropagationPerDatum, 1, smp.Train))
				lf.CompressionPerDatum, lf.PropagationPerDatum = &comp, &prop
			}
			if i < len(ev.Hidden) {
				h := ev.Hidden[i]
				shown := engine.Message{Mean: linalg.Rows(h.Mean, smp.Train), Var: linalg.Rows(h.Var, smp.Train)}
				lf.SetMessage(e, shown)
				collapsed = append(collapsed, latent.Collapsed(shown.Mean, shown.Var))
			}
		} else if tr := a.Value.Train; i+1 < len(s.Model.Layers) && i < len(tr) {
			// Not evaluated on every row (a stochastic fit's first
			// picture: stream's refresh): the sample's hidden messages as
			// its analysis predicts them from the inputs, as an
			// evaluation would propagate them (passAll).
			lf.SetMessage(e, tr[i])
		}
		layers = append(layers, lf)
	}
	sec := fr.outputs(e, layers, a)
	sec.Collapsed = collapsed
	if f.heldOut != nil {
		sec.MeanRMSE = optional(f.heldOut.MeanRMSE)
	}
	all := fr.all.Current(s, func(s *view.Snapshot) *allRows { return passAll(s, f) })
	if all == nil {
		return layers, sec
	}
	it := all.Iter
	sec.AllIter = &it
	for _, sc := range all.Value.Scores {
		sec.Scores = append(sec.Scores, optional(sc.Value))
	}
	sec.TestRMSE = optional(all.Value.TestRMSE)
	if all.Seq != fr.sentAll {
		fr.sentAll = all.Seq
		sec.Density = encodeDensity(e, all.Value.Density)
	}
	return layers, sec
}

// analyzeSample predicts the sample's rows: the output layer's message at
// its training rows, every layer's at its held-out rows.
func analyzeSample(m *engine.Model, f *facts) *latent.Analysis {
	a := &latent.Analysis{TestRMSE: math.NaN()}
	ev := engine.Evaluator{Workers: 1}
	var err error
	if a.Train, err = ev.Predict(m, f.sampleX); err != nil {
		return a
	}
	if f.sampleXTest != nil {
		a.Test, _ = ev.Predict(m, f.sampleXTest)
	}
	return a
}

func encodeDensity(e *wire.Encoder, d [][]Density) []densityLayer {
	out := []densityLayer{}
	for i, ps := range d {
		l := densityLayer{Layer: i, Pairs: []densityPair{}}
		for _, p := range ps {
			l.Pairs = append(l.Pairs, densityPair{A: p.A, B: p.B, G: DensityGrid, Rows: p.Rows,
				Lo: [2]wire.Num{wire.Num(p.Lo[0]), wire.Num(p.Lo[1])}, Hi: [2]wire.Num{wire.Num(p.Hi[0]), wire.Num(p.Hi[1])},
				Counts: e.F32(p.Counts)})
		}
		out = append(out, l)
	}
	return out
}
