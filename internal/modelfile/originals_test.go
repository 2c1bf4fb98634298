package modelfile

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
)

func TestShape(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := engine.RandomModel(rng, 40, []int{2, 3, 1, 2}, []string{"rbf", "rbf", "rbf"}, 7)
	hidden, inducing := (&File{Model: m}).Shape()
	if !reflect.DeepEqual(hidden, []int{3, 1}) || inducing != 7 {
		t.Fatalf("Shape = %v, %d; want [3 1], 7", hidden, inducing)
	}
}

// TestOriginals: the file's data in original units, which its
// normalisers take back to the model's data.
func TestOriginals(t *testing.T) {
	m, _ := integerModel(t)
	nz := dataset.Normalizer{Mean: []float64{10, 20, 30, 40}, Scale: []float64{2, 3, 4, 5}}
	ds, nx, ny, err := (&File{Model: m, NormX: nz, NormY: nz, Info: DataInfo{XUnit: "px"}}).Originals("loaded")
	if err != nil {
		t.Fatal(err)
	}
	if ds.Name != "loaded" || ds.InputUnit != "px" || !reflect.DeepEqual(ds.InputNames, []string{"x1", "x2", "x3", "x4"}) {
		t.Fatalf("data set %q, unit %q, names %v", ds.Name, ds.InputUnit, ds.InputNames)
	}
	back := nx.Apply(ds.X)
	r, c := back.Dims()
	for i := range r {
		for j := range c {
			if d := math.Abs(back.At(i, j) - m.X.At(i, j)); d > 1e-12 {
				t.Fatalf("x[%d,%d]: normalised back %v, model's %v", i, j, back.At(i, j), m.X.At(i, j))
			}
		}
	}
	if !reflect.DeepEqual(ny, nz) {
		t.Fatalf("output normaliser %v, want %v", ny, nz)
	}
	// No normalisation: the identity, the model's data as they are.
	ds, nx, _, err = (&File{Model: m}).Originals("plain")
	if err != nil {
		t.Fatal(err)
	}
	if nx.Scale[0] != 1 || nx.Mean[0] != 0 || ds.X.At(3, 2) != m.X.At(3, 2) {
		t.Fatalf("without normalisation: %v, x %v against %v", nx, ds.X.At(3, 2), m.X.At(3, 2))
	}
	// A normaliser of the wrong width is refused.
	if _, _, _, err := (&File{Model: m, NormX: identity(2), NormY: nz}).Originals("bad"); err == nil {
		t.Fatal("a normalization of 2 columns for 4-column data was accepted")
	}
}
