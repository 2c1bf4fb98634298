package latent

import (
	"fmt"
	"math"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// ModelFigure is the latent-space figure of model m fitted to ds: every
// hidden layer with two or more dimensions, its message means at the
// training inputs coloured by the first input (time) on the same time scale
// as the page (up to the last held-out row), scored against the ground
// truth when ds carries it (see RuleFor). m's inputs are ds's inputs normalised (m.X).
func ModelFigure(m *engine.Model, ds *dataset.Dataset) (*Figure, error) {
	var ev engine.Evaluator
	msgs, err := ev.Predict(m, m.X)
	if err != nil {
		return nil, err
	}
	n, _ := m.X.Dims()
	if r, _ := ds.X.Dims(); r != n {
		return nil, fmt.Errorf("the model has %d inputs, the data set %d", n, r)
	}
	f := &Figure{Times: make([]float64, n), TimeLabel: withUnit(ds.InputNames[0], ds.InputUnit)}
	for i := range f.Times {
		f.Times[i] = ds.X.At(i, 0)
	}
	g := NewGeometry(ds)
	if g != nil {
		if _, c := g.Truth.Dims(); c >= 2 { // a path to draw
			f.Truth = g.Truth
			for _, name := range ds.TruthNames {
				f.TruthNames = append(f.TruthNames, withUnit(name, ds.TruthUnit))
			}
		}
	}
	if xt := ds.XTest; xt != nil {
		nt, _ := xt.Dims()
		f.TimeRange = [2]float64{min(f.Times[0], xt.At(0, 0)), max(f.Times[n-1], xt.At(nt-1, 0))}
	}
	for i, msg := range msgs[:len(msgs)-1] {
		if _, q := msg.Mean.Dims(); q < 2 {
			continue
		}
		f.Layers = append(f.Layers, Layer{Name: fmt.Sprintf("h%d", i+1), Mean: msg.Mean, Var: msg.Var})
		score := math.NaN()
		if g != nil {
			score = g.Score(msg.Mean).Value
		}
		f.Scores = append(f.Scores, score)
	}
	if len(f.Layers) == 0 {
		return nil, ErrNoLatent
	}
	return f, nil
}

// ErrNoLatent is ModelFigure's error for a model without a hidden layer of
// two or more dimensions.
var ErrNoLatent = fmt.Errorf("the model has no hidden layer with 2 or more dimensions to draw")

// ModelTable is every layer's messages of model m at ds's training inputs
// and, when ds has them, its held-out ones (normalised by nx for the
// model), with the inputs in original units, a train/test column and the
// ground truth when known, the last layer's messages in the data's
// original units (by ny) and the hidden layers' latent: the one latent
// table behind the page's "Export latent CSV" and /figure/latent.csv.
func ModelTable(m *engine.Model, ds *dataset.Dataset, nx, ny dataset.Normalizer) (Table, error) {
	inputs := ds.X
	n, _ := ds.X.Dims()
	split := make([]string, n)
	for i := range split {
		split[i] = "train"
	}
	if ds.XTest != nil {
		nt, q := ds.XTest.Dims()
		all := mat.NewDense(n+nt, q, nil)
		all.Slice(0, n, 0, q).(*mat.Dense).Copy(ds.X)
		all.Slice(n, n+nt, 0, q).(*mat.Dense).Copy(ds.XTest)
		inputs = all
		for range nt {
			split = append(split, "test")
		}
	}
	var ev engine.Evaluator
	msgs, err := ev.Predict(m, nx.Apply(inputs))
	if err != nil {
		return Table{}, err
	}
	t := Table{InputNames: ds.InputNames, Inputs: inputs, Split: split, InputUnit: ds.InputUnit, TruthUnit: ds.TruthUnit}
	if tr := ds.Truth; tr != nil {
		if r, _ := tr.Dims(); r == len(split) {
			t.Truth, t.TruthNames = tr, ds.TruthNames
		}
	}
	for i, msg := range msgs {
		l := Layer{Name: fmt.Sprintf("layer%d", i+1), Mean: msg.Mean, Var: msg.Var, Unit: dataset.LatentUnit}
		if i == len(msgs)-1 {
			l.Mean, l.Var, l.Unit = ny.UndoMean(msg.Mean), ny.UndoVar(msg.Var), dataset.UnitName(ds.OutputUnit)
		}
		t.Layers = append(t.Layers, l)
	}
	return t, nil
}

// withUnit labels an axis: "time (s)", or the name alone when the data do
// not name the unit.
func withUnit(name, unit string) string {
	if unit == "" {
		return name
	}
	return name + " (" + unit + ")"
}
