package explorer

import (
	"math"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
	"dgpviz/internal/view"

	"gonum.org/v1/gonum/mat"
)

// AllEvery is the least time between two passes over every row of data
// shown by a sample (allRows). A pass costs a prediction of the held-out
// rows and two scans of the hidden layers' means, about a second of one
// core at a million rows (docs/measurements.md): every two seconds keeps
// it to about half a core beside the optimizer, and the density moves
// slowly once the first iterations are past.
const AllEvery = 2 * time.Second

// allChunk is how many rows a pass predicts at a time: its memory is
// this many rows of every layer's message, not every row's.
const allChunk = 4096

// allRows is what a pass over every row gives a view that shows a sample
// of them: the scores and the test error of all rows, and the density of
// every hidden layer's means (training and held-out rows).
type allRows struct {
	Scores   []latent.Score // each hidden layer's geometry score (nil without ground truth)
	TestRMSE float64        // original units (NaN without a test split)
	Density  [][]Density    // per hidden layer, per pair (Pairs)
	Rows     int            // rows of the data
}

// passAll is the pass over every row of s's data. The training rows'
// hidden means are the optimizer's evaluation's when there is one (no
// new prediction); the held-out rows are predicted allChunk at a time.
func passAll(s *view.Snapshot, f *facts) *allRows {
	m := s.Model
	nh := len(m.Layers) - 1
	out := &allRows{TestRMSE: math.NaN(), Rows: f.nTrain}
	ev := engine.Evaluator{Workers: 1} // frames must not compete with the optimizer
	train := make([]*mat.Dense, nh)
	if s.Eval != nil && len(s.Eval.Hidden) == nh {
		for i, h := range s.Eval.Hidden {
			train[i] = h.Mean
		}
	} else if nh > 0 {
		var err error
		if train, err = predictHidden(&ev, m, s.Data.X, nil); err != nil {
			return out
		}
	}
	if g := f.geometry; g != nil {
		for _, t := range train {
			out.Scores = append(out.Scores, g.Score(t))
		}
	}
	test := make([]*mat.Dense, nh)
	if h := f.heldOut; h != nil {
		var sse float64
		t, err := predictHidden(&ev, m, h.X, func(lo int, y *mat.Dense) {
			r, d := y.Dims()
			for i := range r {
				for j := range d {
					e := y.At(i, j)*h.NormY.Scale[j] + h.NormY.Mean[j] - h.Y.At(lo+i, j)
					sse += e * e
				}
			}
		})
		if err == nil {
			n, d := h.Y.Dims()
			test, out.TestRMSE = t, math.Sqrt(sse/float64(n*d))
			out.Rows += n
		}
	}
	for i := range nh {
		out.Density = append(out.Density, Densities([]*mat.Dense{train[i], test[i]}, DensityGrid))
	}
	return out
}

// predictHidden predicts the rows of x allChunk at a time and returns
// every hidden layer's means; output, when given, gets each chunk's
// output means with the chunk's first row.
func predictHidden(ev *engine.Evaluator, m *engine.Model, x *mat.Dense, output func(lo int, mean *mat.Dense)) ([]*mat.Dense, error) {
	n, _ := x.Dims()
	nh := len(m.Layers) - 1
	layers := nh
	if output != nil {
		layers++
	}
	out := make([]*mat.Dense, nh)
	if layers == 0 {
		return out, nil
	}
	for i := range out {
		_, _, d := m.Layers[i].Dims()
		out[i] = mat.NewDense(n, d, nil)
	}
	for lo := 0; lo < n; lo += allChunk {
		hi := min(lo+allChunk, n)
		msgs, err := ev.PredictLayers(m, x.Slice(lo, hi, 0, x.RawMatrix().Cols).(*mat.Dense), layers)
		if err != nil {
			return nil, err
		}
		for i := range nh {
			out[i].Slice(lo, hi, 0, out[i].RawMatrix().Cols).(*mat.Dense).Copy(msgs[i].Mean)
		}
		if output != nil {
			output(lo, msgs[nh].Mean)
		}
	}
	return out, nil
}
