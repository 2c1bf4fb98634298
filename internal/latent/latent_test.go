package latent

import (
	"bytes"
	"encoding/csv"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// loopPath simulates a robot that drives around a circle twice (n points),
// so that points n/2 apart revisit the same place.
func loopPath(n int) *mat.Dense {
	p := mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		a := 4 * math.Pi * float64(i) / float64(n)
		p.Set(i, 0, 10*math.Cos(a))
		p.Set(i, 1, 10*math.Sin(a))
	}
	return p
}

func TestLoopClosure(t *testing.T) {
	const n = 200
	path := loopPath(n)
	// A latent equal to the true path closes the loop: revisits are the
	// closest far pairs.
	rule := Rule{MinLag: 50, Radius: 2}
	perfect, err := LoopClosure(path, path, rule)
	if err != nil {
		t.Fatal(err)
	}
	// A latent that encodes only time keeps revisits (n/2 apart) farther
	// apart than most far pairs.
	timeOnly, err := LoopClosure(TimeFeatures(n, 3), path, rule)
	if err != nil {
		t.Fatal(err)
	}
	if perfect.Value < 0.95 {
		t.Errorf("true path as latent scores %.3f, want ≥ 0.95", perfect.Value)
	}
	if timeOnly.Value > 0.5 {
		t.Errorf("time-only latent scores %.3f, want < 0.5", timeOnly.Value)
	}
	if perfect.Revisits == 0 || perfect.FarPairs != (n-rule.MinLag)*(n-rule.MinLag+1)/2 {
		t.Errorf("counts %+v", perfect)
	}
	t.Logf("perfect %.3f, time only %.3f (%d revisits of %d far pairs)", perfect.Value, timeOnly.Value, perfect.Revisits, perfect.FarPairs)
}

func TestLoopClosureErrors(t *testing.T) {
	path := loopPath(100)
	if _, err := LoopClosure(mat.NewDense(99, 1, nil), path, Rule{10, 1}); err == nil {
		t.Error("row mismatch accepted")
	}
	if _, err := LoopClosure(path, path, Rule{0, 1}); err == nil {
		t.Error("minLag 0 accepted")
	}
	// A straight line never revisits.
	line := mat.NewDense(100, 1, nil)
	for i := 0; i < 100; i++ {
		line.Set(i, 0, float64(i))
	}
	if _, err := LoopClosure(line, line, Rule{10, 1}); err == nil || !strings.Contains(err.Error(), "no revisits") {
		t.Errorf("straight path: %v, want a no-revisits error", err)
	}
	bad := mat.DenseCopyOf(path)
	bad.Set(3, 0, math.NaN())
	if _, err := LoopClosure(bad, path, Rule{10, 1}); err == nil {
		t.Error("NaN latent accepted")
	}
}

func TestWriteCSV(t *testing.T) {
	in := mat.NewDense(2, 1, []float64{0, 1.5})
	l := LayerMessages{Name: "layer1", Mean: mat.NewDense(2, 2, []float64{1, 2, 3, 4}), Var: mat.NewDense(2, 2, []float64{0.1, 0.2, 0.3, 0.4})}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, Table{InputNames: []string{"time"}, InputUnit: "s", TruthUnit: "m", Inputs: in, Split: []string{"train", "test"}, Truth: mat.NewDense(2, 2, []float64{1, 2, 3, 4}), TruthNames: []string{"truth_x", "truth_y"}, Layers: []LayerMessages{l}}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"time [s]", "split", "truth_x [m]", "truth_y [m]", "layer1_dim1_mean [latent]", "layer1_dim2_mean [latent]", "layer1_dim1_var [latent]", "layer1_dim2_var [latent]"},
		{"0", "train", "1", "2", "1", "2", "0.1", "0.2"},
		{"1.5", "test", "3", "4", "3", "4", "0.3", "0.4"},
	}
	for i := range want {
		if strings.Join(rows[i], ",") != strings.Join(want[i], ",") {
			t.Errorf("row %d: %v, want %v", i, rows[i], want[i])
		}
	}
	if err := WriteCSV(&buf, Table{InputNames: []string{"a", "b"}, Inputs: in}); err == nil {
		t.Error("name count mismatch accepted")
	}
}

// TestRevisits checks the revisit pairs against their definition, computed
// here independently, and that they are the pairs LoopClosure averages.
func TestRevisits(t *testing.T) {
	path := loopPath(200)
	rule := Rule{MinLag: 50, Radius: 2}
	got := Revisits(path, rule)
	var want [][2]int
	for i := 0; i < 200; i++ {
		for j := 0; j < 200; j++ {
			dx, dy := path.At(i, 0)-path.At(j, 0), path.At(i, 1)-path.At(j, 1)
			if j-i >= rule.MinLag && math.Hypot(dx, dy) <= rule.Radius {
				want = append(want, [2]int{i, j})
			}
		}
	}
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("%d revisits, want %d (> 0)", len(got), len(want))
	}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("revisit %d: %v, want %v", k, got[k], want[k])
		}
	}
	s, err := LoopClosure(path, path, Rule{MinLag: 50, Radius: 2})
	if err != nil || s.Revisits != len(got) {
		t.Errorf("LoopClosure counts %d revisits (%v), Revisits %d", s.Revisits, err, len(got))
	}
}
