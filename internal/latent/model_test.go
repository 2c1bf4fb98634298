package latent

import (
	"errors"
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
	tab, err := ModelTable(m, ds, dataset.Normalizer{})
	if err != nil {
		t.Fatal(err)
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
