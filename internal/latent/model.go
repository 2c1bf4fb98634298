package latent

import (
	"fmt"
	"math"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/linalg"

	"gonum.org/v1/gonum/mat"
)

// MaxFigureRows is the most rows the latent-space figure draws: beyond,
// every k-th row, so that the path still reads in time order and a
// figure of a million rows stays a few megabytes.
const MaxFigureRows = 20000

// figureRows is MaxFigureRows, lowered by tests.
var figureRows = MaxFigureRows

// ModelFigure is the latent-space figure of model m fitted to ds: every
// hidden layer with two or more dimensions, its message means at the
// training inputs coloured by the first input (time) on the same time scale
// as the page (up to the last held-out row), scored against the ground
// truth when ds carries it (see RuleFor) on every row, and drawn at most
// MaxFigureRows rows (FigureData.Note says which). m's inputs are ds's inputs
// normalised (m.X).
func ModelFigure(m *engine.Model, ds *dataset.Dataset) (*FigureData, error) {
	n, _ := m.X.Dims()
	if r, _ := ds.X.Dims(); r != n {
		return nil, fmt.Errorf("the model has %d inputs, the data set %d", n, r)
	}
	every := (n + figureRows - 1) / figureRows
	drawn := make([]int, 0, (n+every-1)/every)
	for i := 0; i < n; i += every {
		drawn = append(drawn, i)
	}
	f := &FigureData{Times: make([]float64, len(drawn)), TimeLabel: withUnit(ds.InputNames[0], ds.InputUnit)}
	for k, i := range drawn {
		f.Times[k] = ds.X.At(i, 0)
	}
	if every > 1 {
		f.Note = fmt.Sprintf("every %s row drawn (%d of %d)", ordinal(every), len(drawn), n)
	}
	g := NewGeometry(ds)
	if g != nil {
		if _, c := g.Truth.Dims(); c >= 2 { // a path to draw
			f.Truth = linalg.Rows(g.Truth, drawn)
			for _, name := range ds.TruthNames {
				f.TruthNames = append(f.TruthNames, withUnit(name, ds.TruthUnit))
			}
		}
	}
	if xt := ds.XTest; xt != nil {
		nt, _ := xt.Dims()
		f.TimeRange = [2]float64{min(ds.X.At(0, 0), xt.At(0, 0)), max(ds.X.At(n-1, 0), xt.At(nt-1, 0))}
	}
	// Every row's hidden means, for the scores; the drawn rows' messages.
	hidden := len(m.Layers) - 1
	means := make([]*mat.Dense, hidden)
	layers := make([]LayerMessages, hidden)
	var ev engine.Evaluator
	next := 0 // the next drawn row's index in drawn
	err := predictChunks(&ev, m, m.X, func(lo int, msgs []engine.Message) {
		r, _ := msgs[0].Mean.Dims()
		first := next
		for next < len(drawn) && drawn[next] < lo+r {
			next++
		}
		for k, msg := range msgs[:hidden] {
			_, q := msg.Mean.Dims()
			if means[k] == nil {
				means[k] = mat.NewDense(n, q, nil)
				layers[k] = LayerMessages{Name: fmt.Sprintf("h%d", k+1), Mean: mat.NewDense(len(drawn), q, nil), Var: mat.NewDense(len(drawn), q, nil)}
			}
			means[k].Slice(lo, lo+r, 0, q).(*mat.Dense).Copy(msg.Mean)
			for d := first; d < next; d++ {
				layers[k].Mean.SetRow(d, msg.Mean.RawRowView(drawn[d]-lo))
				layers[k].Var.SetRow(d, msg.Var.RawRowView(drawn[d]-lo))
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for k, l := range layers {
		if l.Mean == nil {
			continue
		}
		if _, q := l.Mean.Dims(); q < 2 {
			continue
		}
		f.Layers = append(f.Layers, l)
		score, se := math.NaN(), 0.0
		if g != nil {
			s := g.Score(means[k])
			score = s.Value
			if s.Sampled() {
				se = s.StdErr
			}
		}
		f.Scores = append(f.Scores, score)
		f.StdErrs = append(f.StdErrs, se)
	}
	if len(f.Layers) == 0 {
		return nil, ErrNoLatent
	}
	return f, nil
}

// ordinal is "2nd", "50th", "101st".
func ordinal(k int) string {
	suffix := "th"
	switch {
	case k%100 >= 11 && k%100 <= 13:
	case k%10 == 1:
		suffix = "st"
	case k%10 == 2:
		suffix = "nd"
	case k%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", k, suffix)
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
	x := nx.Apply(inputs)
	var msgs []engine.Message
	if err := predictChunks(&ev, m, x, func(lo int, chunk []engine.Message) { msgs = gather(msgs, x, lo, chunk) }); err != nil {
		return Table{}, err
	}
	t := Table{InputNames: ds.InputNames, Inputs: inputs, Split: split, InputUnit: ds.InputUnit, TruthUnit: ds.TruthUnit}
	if tr := ds.Truth; tr != nil {
		if r, _ := tr.Dims(); r == len(split) {
			t.Truth, t.TruthNames = tr, ds.TruthNames
		}
	}
	for i, msg := range msgs {
		_, d := msg.Mean.Dims()
		l := LayerMessages{Name: fmt.Sprintf("layer%d", i+1), Mean: msg.Mean, Var: msg.Var, Unit: dataset.LatentUnit, Columns: dataset.LayerColumns(i, len(msgs), d, ds.OutputNames)}
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
