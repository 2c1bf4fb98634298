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
	Truth *mat.Dense // the training rows' ground truth (N × P)
	Rule  Rule
	// Pairs are the pairs every latent is scored on (nil when the rule
	// has no positive radius: the truth never moves).
	Pairs     *Pairs
	Baselines []Baseline // BaselinePCA, then BaselineInput
}

// Baseline is a baseline's geometry score.
type Baseline struct {
	Name  string
	Score Score // Value NaN when it cannot be scored (no revisits)
}

// NewGeometry returns ds's geometry judge with DefaultSampling, or nil
// when ds carries no ground truth for its training rows.
func NewGeometry(ds *dataset.Dataset) *Geometry { return NewGeometryWith(ds, DefaultSampling) }

// NewGeometryWith is NewGeometry with samples of the given sizes.
func NewGeometryWith(ds *dataset.Dataset, s Sampling) *Geometry {
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
	g.Pairs, _ = NewPairs(g.Truth, g.Rule, s)
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
	if g.Pairs == nil {
		return Score{Value: math.NaN()}
	}
	s, err := g.Pairs.Score(latent)
	if err != nil {
		s.Value, s.StdErr = math.NaN(), math.NaN()
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
	return math.Sqrt(h.squaredError(0, mean) / float64(n*d))
}

// squaredError is the sum of squared errors, original units, of the
// predicted means (normalised) of the test rows from row lo on.
func (h *HeldOut) squaredError(lo int, mean *mat.Dense) float64 {
	r, d := mean.Dims()
	var s float64
	for i := range r {
		for j := range d {
			e := mean.At(i, j)*h.NormY.Scale[j] + h.NormY.Mean[j] - h.Y.At(lo+i, j)
			s += e * e
		}
	}
	return s
}

// Analysis is a model's judgement: its messages and numbers.
type Analysis struct {
	// Train and Test are every layer's messages at the training and the
	// test inputs (nil without AnalyzeOptions.Messages; Test nil without
	// a split).
	Train, Test []engine.Message
	// Scores are the geometry scores of every hidden layer's means (nil
	// without ground truth).
	Scores   []Score
	TestRMSE float64 // original units (NaN without a split)
	// Collapsed says which dimensions of every hidden layer have collapsed
	// at the training rows (Collapsed's rule), dimension by dimension.
	Collapsed [][]bool
}

// AnalyzeOptions are Analyze's settings.
type AnalyzeOptions struct {
	Workers int // evaluator goroutines (0: one per CPU)
	// Messages keeps every layer's messages, as the page shows them: 16
	// bytes per row and dimension of every layer. Without, Analyze keeps
	// only the hidden layers' means at the training rows, which the
	// scores need.
	Messages bool
}

// PredictRows is how many rows Analyze predicts at once: the evaluator's
// work space grows with the rows it predicts (ψ statistics, every layer's
// messages), and a chunk's suffices.
const PredictRows = 16384

// Analyze judges model m against g and h (either may be nil). It fails
// only when m cannot predict.
func Analyze(m *engine.Model, g *Geometry, h *HeldOut, o AnalyzeOptions) (*Analysis, error) {
	ev := engine.Evaluator{Workers: o.Workers}
	a := &Analysis{TestRMSE: math.NaN()}
	hidden := len(m.Layers) - 1
	var means []*mat.Dense // the hidden layers' means at the training rows
	spread := make([]spreads, hidden)
	err := predictChunks(&ev, m, m.X, func(lo int, msgs []engine.Message) {
		for k, msg := range msgs[:hidden] {
			spread[k].add(msg.Mean, msg.Var)
		}
		if o.Messages {
			a.Train = gather(a.Train, m.X, lo, msgs)
		}
		if g == nil || o.Messages {
			return
		}
		if means == nil {
			n, _ := m.X.Dims()
			for _, msg := range msgs[:hidden] {
				_, q := msg.Mean.Dims()
				means = append(means, mat.NewDense(n, q, nil))
			}
		}
		for k, msg := range msgs[:hidden] {
			r, q := msg.Mean.Dims()
			means[k].Slice(lo, lo+r, 0, q).(*mat.Dense).Copy(msg.Mean)
		}
	})
	if err != nil {
		return a, err
	}
	for k := range spread {
		a.Collapsed = append(a.Collapsed, spread[k].collapsed())
	}
	if o.Messages && g != nil {
		for _, msg := range a.Train[:hidden] {
			means = append(means, msg.Mean)
		}
	}
	for _, mean := range means {
		a.Scores = append(a.Scores, g.Score(mean))
	}
	if h != nil {
		var sq float64
		err := predictChunks(&ev, m, h.X, func(lo int, msgs []engine.Message) {
			if o.Messages {
				a.Test = gather(a.Test, h.X, lo, msgs)
			}
			sq += h.squaredError(lo, msgs[len(msgs)-1].Mean)
		})
		if err != nil {
			return a, err
		}
		n, d := h.Y.Dims()
		a.TestRMSE = math.Sqrt(sq / float64(n*d))
	}
	return a, nil
}

// predictChunks predicts m's messages at the rows of x, PredictRows at a
// time, and hands each chunk's, with its first row, to f.
func predictChunks(ev *engine.Evaluator, m *engine.Model, x *mat.Dense, f func(lo int, msgs []engine.Message)) error {
	n, q := x.Dims()
	for lo := 0; lo < n; lo += PredictRows {
		hi := min(n, lo+PredictRows)
		msgs, err := ev.Predict(m, x.Slice(lo, hi, 0, q).(*mat.Dense))
		if err != nil {
			return err
		}
		f(lo, msgs)
	}
	return nil
}

// gather copies a chunk's messages, from row lo, into all (allocated for
// the rows of x on the first chunk).
func gather(all []engine.Message, x *mat.Dense, lo int, msgs []engine.Message) []engine.Message {
	if all == nil {
		n, _ := x.Dims()
		for _, msg := range msgs {
			_, d := msg.Mean.Dims()
			all = append(all, engine.Message{Mean: mat.NewDense(n, d, nil), Var: mat.NewDense(n, d, nil)})
		}
	}
	for k, msg := range msgs {
		r, d := msg.Mean.Dims()
		all[k].Mean.Slice(lo, lo+r, 0, d).(*mat.Dense).Copy(msg.Mean)
		all[k].Var.Slice(lo, lo+r, 0, d).(*mat.Dense).Copy(msg.Var)
	}
	return all
}
