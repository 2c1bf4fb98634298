package latent

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// TestModelFigureAndTable: the figure draws the 2-D hidden layer (scored,
// since the data set has a path) and the table has every layer at the
// training and held-out inputs, split-labelled; a model without a 2-D hidden
// layer has no latent figure.
func TestModelFigureAndTable(t *testing.T) {
	const n, nt = 20, 5
	m := engine.RandomModel(rand.New(rand.NewPCG(1, 2)), n, []int{1, 2, 1}, []string{"rbf", "rbf"}, 5)
	xt := mat.NewDense(nt, 1, nil)
	pos := mat.NewDense(n+nt, 2, nil)
	for i := range n + nt {
		pos.Set(i, 0, float64(i))
		if i >= n {
			xt.Set(i-n, 0, 1+float64(i-n)/10)
		}
	}
	ds := &dataset.Dataset{Name: "t", X: m.X, Y: m.Y, XTest: xt, InputNames: []string{"time"}, OutputNames: []string{"y"}, Truth: pos, TruthNames: []string{"truth_x", "truth_y"}}
	f, err := ModelFigure(m, ds)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Layers) != 1 || f.Layers[0].Name != "h1" || len(f.Scores) != 1 {
		t.Errorf("figure layers %d, scores %v", len(f.Layers), f.Scores)
	}
	if f.TimeRange[1] != xt.At(nt-1, 0) {
		t.Errorf("time range %v does not reach the last held-out input", f.TimeRange)
	}
	// The last layer's messages go back to the data's original units
	// (y = 10 + 3·normalised), the hidden layers' stay latent.
	ny := dataset.Normalizer{Mean: []float64{10}, Scale: []float64{3}}
	ds.OutputUnit = "dBm"
	tab, err := ModelTable(m, ds, dataset.Normalizer{}, ny)
	if err != nil {
		t.Fatal(err)
	}
	var ev engine.Evaluator
	msgs, _ := ev.Predict(m, m.X)
	if got, want := tab.Layers[1].Mean.At(3, 0), 10+3*msgs[1].Mean.At(3, 0); got != want || tab.Layers[1].Var.At(3, 0) != msgs[1].Var.At(3, 0)*3*3 || tab.Layers[1].Unit != "dBm" {
		t.Errorf("output layer: mean %v (want %v), unit %q", got, want, tab.Layers[1].Unit)
	}
	if tab.Layers[0].Mean.At(3, 1) != msgs[0].Mean.At(3, 1) || tab.Layers[0].Unit != dataset.LatentUnit {
		t.Errorf("hidden layer changed or unit %q", tab.Layers[0].Unit)
	}
	if len(tab.Split) != n+nt || tab.Split[n-1] != "train" || tab.Split[n] != "test" || len(tab.Layers) != 2 {
		t.Errorf("table: %d rows, layers %d", len(tab.Split), len(tab.Layers))
	}
	if r, _ := tab.Layers[1].Mean.Dims(); r != n+nt {
		t.Errorf("table layer 2 has %d rows", r)
	}
	flat := engine.RandomModel(rand.New(rand.NewPCG(1, 2)), n, []int{1, 1, 1}, []string{"rbf", "rbf"}, 5)
	if _, err := ModelFigure(flat, &dataset.Dataset{X: flat.X, Y: flat.Y, InputNames: []string{"x"}}); !errors.Is(err, ErrNoLatent) {
		t.Errorf("1-D hidden layer: %v, want ErrNoLatent", err)
	}
}

// TestModelFigureDrawsEveryKthRow: beyond MaxFigureRows rows (lowered to
// 150 here) the figure draws every k-th row's messages, says so, and
// scores every row.
func TestModelFigureDrawsEveryKthRow(t *testing.T) {
	defer func(r int) { figureRows = r }(figureRows)
	figureRows = 150
	n := figureRows + 1
	m := engine.RandomModel(rand.New(rand.NewPCG(3, 4)), n, []int{1, 2, 1}, []string{"rbf", "rbf"}, 5)
	pos := loopPath(n)
	ds := &dataset.Dataset{Name: "t", X: m.X, Y: m.Y, InputNames: []string{"time"}, OutputNames: []string{"y"}, Truth: pos, TruthNames: []string{"truth_x", "truth_y"}}
	f, err := ModelFigure(m, ds)
	if err != nil {
		t.Fatal(err)
	}
	drawn := (n + 1) / 2
	if len(f.Times) != drawn || f.Note != fmt.Sprintf("every 2nd row drawn (%d of %d)", drawn, n) {
		t.Fatalf("%d times drawn, note %q", len(f.Times), f.Note)
	}
	var ev engine.Evaluator
	msgs, err := ev.Predict(m, m.X)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 1, drawn / 2, drawn - 1} {
		if f.Layers[0].Mean.At(k, 1) != msgs[0].Mean.At(2*k, 1) || f.Layers[0].Var.At(k, 0) != msgs[0].Var.At(2*k, 0) ||
			f.Times[k] != m.X.At(2*k, 0) || f.Truth.At(k, 1) != pos.At(2*k, 1) {
			t.Errorf("drawn row %d is not row %d", k+1, 2*k+1)
		}
	}
	if want := NewGeometry(ds).Score(msgs[0].Mean); f.Scores[0] != want.Value || f.StdErrs[0] != want.StdErr {
		t.Errorf("score %v ± %v, every row's %v ± %v", f.Scores[0], f.StdErrs[0], want.Value, want.StdErr)
	}
}
