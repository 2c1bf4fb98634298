package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestNoOutputMessageAndDataRows: an evaluation with NoOutputMessage has
// the same bound and gradient, bit for bit, without the last layer's
// message; one Evaluator's full-data evaluations (which read the model's
// data in place), minibatches and evaluations of a model whose data are a
// view with gaps between the rows agree with fresh evaluations, and leave
// the data as they were.
func TestNoOutputMessageAndDataRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	m := RandomModel(rng, 40, []int{6, 2, 5}, []string{"rbfiso", "rbf"}, 5)
	x0, y0 := mat.DenseCopyOf(m.X), mat.DenseCopyOf(m.Y)
	var e Evaluator
	check := func(name string, model *Model, opt Options) {
		t.Helper()
		r1, g1, err := e.Evaluate(model, opt)
		if err != nil {
			t.Fatal(err)
		}
		r2, g2 := mustEval(t, model, opt)
		if r1.Bound != r2.Bound || !slices.Equal(g1.Flatten(nil), g2.Flatten(nil)) {
			t.Errorf("%s: bound %v, fresh evaluator %v (or the gradients differ)", name, r1.Bound, r2.Bound)
		}
	}
	for range 2 {
		check("full", m, Options{Gradient: true})
		check("minibatch", m, Options{Gradient: true, Rows: []int{3, 1, 4, 1, 5, 9, 2, 6}})
	}
	if !mat.Equal(m.X, x0) || !mat.Equal(m.Y, y0) {
		t.Fatal("the evaluations changed the model's data")
	}
	r1, g1 := mustEval(t, m, Options{Gradient: true})
	r2, g2 := mustEval(t, m, Options{Gradient: true, NoOutputMessage: true})
	if r1.Bound != r2.Bound || !slices.Equal(g1.Flatten(nil), g2.Flatten(nil)) {
		t.Errorf("NoOutputMessage changed the bound (%v, %v) or the gradient", r1.Bound, r2.Bound)
	}
	if r2.Messages[1].Mean != nil || r2.Messages[0].Mean == nil || r1.Messages[1].Mean == nil {
		t.Errorf("NoOutputMessage: messages %v, without it %v", r2.Messages, r1.Messages)
	}
	// The same data as views into wider matrices: rows with gaps.
	wide := func(a *mat.Dense) *mat.Dense {
		r, c := a.Dims()
		w := mat.NewDense(r, c+3, nil)
		s := w.Slice(0, r, 1, c+1).(*mat.Dense)
		s.Copy(a)
		return s
	}
	v := m.Clone()
	v.X, v.Y = wide(m.X), wide(m.Y)
	rv, _ := mustEval(t, v, Options{})
	if rv.Bound != r1.Bound {
		t.Errorf("data with gaps between rows: bound %v, contiguous %v", rv.Bound, r1.Bound)
	}
	check("gaps", v, Options{Gradient: true})
}

// TestCheckFinite: every position of a NaN or an infinity is found and
// named, in the unrolled part of a row and its tail, in a view with gaps
// between the rows; huge finite values pass.
func TestCheckFinite(t *testing.T) {
	big := mat.NewDense(4, 9, nil)
	for r := range 4 {
		for c := range 9 {
			big.Set(r, c, math.MaxFloat64*float64(1-2*((r+c)%2)))
		}
	}
	v := big.Slice(1, 4, 1, 8).(*mat.Dense)
	if err := CheckFinite(big, "a"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for r := range 3 {
			for c := range 7 {
				old := v.At(r, c)
				v.Set(r, c, bad)
				err := CheckFinite(v, "a")
				if want := fmt.Sprintf("a[%d][%d]", r, c); err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%v at [%d][%d]: %v", bad, r, c, err)
				}
				v.Set(r, c, old)
			}
		}
	}
}
