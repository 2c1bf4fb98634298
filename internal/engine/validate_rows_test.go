package engine_test

import (
	"math"
	"strings"
	"testing"

	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// TestValidateRows: a minibatch's evaluation checks the finiteness of its
// own rows' data only, and a prediction at other inputs none of the data:
// neither costs a pass over every row. A NaN in a row the evaluation uses
// is still an error, and the full evaluation finds it anywhere.
func TestValidateRows(t *testing.T) {
	m := tinyModel()
	m.Y.Set(3, 0, math.NaN())
	var ev engine.Evaluator
	if _, _, err := ev.Evaluate(m, engine.Options{Rows: []int{0, 1, 4}}); err != nil {
		t.Errorf("minibatch of rows 1, 2, 5 with a NaN in row 4: %v; want it evaluated", err)
	}
	if _, _, err := ev.Evaluate(m, engine.Options{Rows: []int{0, 3}}); err == nil || !strings.Contains(err.Error(), "data.Y[3][0]") {
		t.Errorf("minibatch with the NaN's row: %v; want data.Y[3][0] named", err)
	}
	if _, _, err := ev.Evaluate(m, engine.Options{}); err == nil {
		t.Error("the full evaluation passed a NaN in the data")
	}
	if _, err := ev.Predict(m, mat.NewDense(2, 1, []float64{0.1, 0.2})); err != nil {
		t.Errorf("prediction at other inputs with a NaN in the data: %v; want it made", err)
	}
	if _, err := ev.Predict(m, mat.NewDense(1, 1, []float64{math.Inf(1)})); err == nil {
		t.Error("prediction at an infinite input passed")
	}
	if err := m.Validate(); err == nil {
		t.Error("Validate passed a NaN in the data")
	}
}
