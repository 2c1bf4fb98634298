package latent

import (
	"math"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// Judging a model of a data set with several outputs: the one computation
// behind the explorer's readout (internal/view/explorer) and `viz latent`,
// so that the page and the command line give the same numbers for the same
// model. What can be judged depends on what the data carry: ground truth
// (Geometry: the geometry score of every hidden layer beside two baselines
// that use no model) and a test split (HeldOut: the held-out RMSE beside
// the training mean and a one-layer sparse GP, which the explorer fits:
// explorer.OneLayerGP).

// BaselineDims is the width of the outputs' principal-component baseline:
// as wide as the explorer preset's hidden layers.
const BaselineDims = 3

// Baseline names, as the page and `viz latent` print them.
const (
	BaselinePCA   = "principal components of the outputs"
	BaselineInput = "the input alone"
	BaselineMean  = "the training mean"
	BaselineGP1   = "a one-layer sparse GP"
)

// Geometry is what a data set's ground truth offers to judge latent
// spaces: the training rows' truth, the score's rule and the scores of
// the latents that use no model.
type Geometry struct {
	Truth     *mat.Dense // the training rows' ground truth (N × P)
	Rule      Rule
	Baselines []Baseline // BaselinePCA, then BaselineInput
}

// Baseline is a baseline's geometry score.
type Baseline struct {
	Name  string
	Score Score // Value NaN when it cannot be scored (no revisits)
}

// NewGeometry returns ds's geometry judge, or nil when ds carries no
// ground truth for its training rows.
func NewGeometry(ds *dataset.Dataset) *Geometry {
	n, _ := ds.X.Dims()
	t := ds.Truth
	if t == nil {
		return nil
	}
	if r, c := t.Dims(); r < n || c < 1 {
		return nil
	}
	_, c := t.Dims()
	g := &Geometry{Truth: mat.DenseCopyOf(t.Slice(0, n, 0, c))}
	g.Rule = RuleFor(g.Truth)
	for _, b := range []struct {
		name string
		lat  *mat.Dense
	}{
		{BaselinePCA, OutputBaseline(ds.Y, BaselineDims)},
		{BaselineInput, InputBaseline(ds.X)},
	} {
		g.Baselines = append(g.Baselines, Baseline{b.name, g.Score(b.lat)})
	}
	return g
}

// Score is the geometry score of latent points at the training rows
// (Value NaN when the truth has no revisits or a point is not finite).
func (g *Geometry) Score(latent *mat.Dense) Score {
	s, err := LoopClosure(latent, g.Truth, g.Rule)
	if err != nil {
		s.Value = math.NaN()
	}
	return s
}

// HeldOut is a data set's test split, to judge a model's predictions.
type HeldOut struct {
	X     *mat.Dense // test inputs, normalised as the model's inputs
	Y     *mat.Dense // test outputs, original units
	NormY dataset.Normalizer
	// MeanRMSE is the test RMSE of predicting every row by the training
	// mean, original units.
	MeanRMSE float64
}

// NewHeldOut returns ds's test split for a model whose data were
// normalised by nx and ny, or nil when ds has none.
func NewHeldOut(ds *dataset.Dataset, nx, ny dataset.Normalizer) *HeldOut {
	if ds.XTest == nil || ds.YTest == nil {
		return nil
	}
	h := &HeldOut{X: nx.Apply(ds.XTest), Y: ds.YTest, NormY: ny}
	n, d := ds.YTest.Dims()
	h.MeanRMSE = h.RMSE(mat.NewDense(n, d, nil)) // normalised 0 is the training mean
	return h
}

// RMSE is the root mean squared error, in the outputs' original units, of
// predicted means (normalised, test rows × outputs); NaN when the shapes
// differ.
func (h *HeldOut) RMSE(mean *mat.Dense) float64 {
	if h == nil || mean == nil {
		return math.NaN()
	}
	n, d := h.Y.Dims()
	if r, c := mean.Dims(); r != n || c != d {
		return math.NaN()
	}
	var s float64
	for i := range n {
		for j := range d {
			e := mean.At(i, j)*h.NormY.Scale[j] + h.NormY.Mean[j] - h.Y.At(i, j)
			s += e * e
		}
	}
	return math.Sqrt(s / float64(n*d))
}

// Analysis is a model's judgement: its messages and numbers.
type Analysis struct {
	Train []engine.Message // every layer's message at the training inputs
	Test  []engine.Message // every layer's message at the test inputs (nil without a split)
	// Scores are the geometry scores of every hidden layer's means (nil
	// without ground truth).
	Scores   []Score
	TestRMSE float64 // original units (NaN without a split)
}

// Analyze judges model m against g and h (either may be nil) with the
// given evaluator workers (0: one per CPU). It fails only when m cannot
// predict.
func Analyze(m *engine.Model, g *Geometry, h *HeldOut, workers int) (*Analysis, error) {
	ev := engine.Evaluator{Workers: workers}
	a := &Analysis{TestRMSE: math.NaN()}
	msgs, err := ev.Predict(m, m.X)
	if err != nil {
		return a, err
	}
	a.Train = msgs
	if g != nil {
		for _, msg := range msgs[:len(msgs)-1] {
			a.Scores = append(a.Scores, g.Score(msg.Mean))
		}
	}
	if h != nil {
		tm, err := ev.Predict(m, h.X)
		if err != nil {
			return a, err
		}
		a.Test, a.TestRMSE = tm, h.RMSE(tm[len(tm)-1].Mean)
	}
	return a, nil
}
