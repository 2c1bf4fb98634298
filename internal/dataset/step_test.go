package dataset

import (
	"math"
	"testing"
)

func TestStep(t *testing.T) {
	ds := Step()
	if ds.Name != "step" {
		t.Errorf("Name = %q, want step", ds.Name)
	}
	// 30 points, one input, one output: the paper's step-function data.
	if r, c := ds.X.Dims(); r != 30 || c != 1 {
		t.Fatalf("X is %d×%d, want 30×1", r, c)
	}
	if r, c := ds.Y.Dims(); r != 30 || c != 1 {
		t.Fatalf("Y is %d×%d, want 30×1", r, c)
	}
	if ds.XTest != nil || ds.YTest != nil || ds.Truth != nil || ds.Imputed != nil {
		t.Error("step has no test set, positions or fill-ins")
	}
	if len(ds.InputNames) != 1 || len(ds.OutputNames) != 1 {
		t.Errorf("names = %q, %q; want one each", ds.InputNames, ds.OutputNames)
	}
	for i := range 30 {
		// The inputs are i/29 written to 15 significant digits, so they
		// agree with i/29 to about 1e-15.
		if x := ds.X.At(i, 0); math.Abs(x-float64(i)/29) > 1e-14 {
			t.Errorf("x[%d] = %v, want %v", i, x, float64(i)/29)
		}
		// A unit step at x = 0.5 plus noise of about 0.03 sd; the
		// largest deviation in the data is 0.069 (y[18] = 0.9316).
		want := 0.0
		if i >= 15 {
			want = 1
		}
		if y := ds.Y.At(i, 0); math.Abs(y-want) > 0.1 {
			t.Errorf("y[%d] = %v, want %v ± 0.1", i, y, want)
		}
	}
	// Spot checks: first, middle and last values from the paper's data.
	for _, c := range []struct {
		i    int
		x, y float64
	}{
		{0, 0, 0.00480755177651519},
		{15, 0.517241379310345, 0.986235145248351},
		{29, 1, 0.99177048985369},
	} {
		if x, y := ds.X.At(c.i, 0), ds.Y.At(c.i, 0); x != c.x || y != c.y {
			t.Errorf("row %d = (%v, %v), want (%v, %v)", c.i, x, y, c.x, c.y)
		}
	}

	// Each call returns fresh matrices.
	ds.X.Set(0, 0, 42)
	if Step().X.At(0, 0) != 0 {
		t.Error("Step shares storage between calls")
	}
}

// TestStepMatchesSharedData checks the embedded values against the copy of
// the paper's data in shared/data/step_function/step.csv, digit for digit.
func TestStepMatchesSharedData(t *testing.T) {
	path := sharedFile(t, "step_function", "step.csv")
	file, err := LoadCSV(path, CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds := Step()
	if !equalDense(file.X, ds.X) || !equalDense(file.Y, ds.Y) {
		t.Errorf("embedded step data differ from %s", path)
	}
	if file.Name != "csv:step.csv" {
		t.Errorf("Name = %q, want csv:step.csv", file.Name)
	}
}
