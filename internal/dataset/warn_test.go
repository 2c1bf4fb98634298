package dataset

import (
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestWarnings(t *testing.T) {
	if w := Warnings(Step()); len(w) != 0 {
		t.Errorf("the step data: %q, want no warnings", w)
	}
	flat := &Dataset{Name: "flat", X: mat.NewDense(6, 1, []float64{1, 2, 3, 4, 5, 6}), Y: mat.NewDense(6, 1, []float64{2, 2, 2, 2, 2, 2}), InputNames: []string{"x"}, OutputNames: []string{"y"}}
	if w := Warnings(flat); len(w) != 1 || !strings.Contains(w[0], `output "y" of flat is constant`) {
		t.Errorf("constant y: %q", w)
	}
	tiny := &Dataset{Name: "tiny", X: mat.NewDense(2, 1, []float64{0, 0}), Y: mat.NewDense(2, 1, []float64{1, 2}), InputNames: []string{"x"}, OutputNames: []string{"y"}}
	w := Warnings(tiny)
	if len(w) != 2 || !strings.Contains(w[0], "only 2 rows") || !strings.Contains(w[1], `input "x" of tiny is constant`) {
		t.Errorf("two rows, constant x: %q", w)
	}
}
