package regression

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"

	"gonum.org/v1/gonum/mat"
)

// editSession is a view.Session that applies EditData as the transport
// does (the model refitted by the op's fit, the data replaced) and
// records the edits' labels.
type editSession struct {
	m      *engine.Model
	d      *view.Data
	labels []string
}

func (s *editSession) Model() *engine.Model { return s.m }
func (s *editSession) Data() *view.Data     { return s.d }
func (s *editSession) Arch() view.Arch      { return view.Arch{} }
func (s *editSession) Iter() int            { return 0 }
func (s *editSession) Edit(label string, m *engine.Model) error {
	s.m, s.labels = m, append(s.labels, label)
	return nil
}
func (s *editSession) EditData(label string, x, y *mat.Dense, edited bool, fit func(m *engine.Model, x, y *mat.Dense) (*engine.Model, error)) error {
	m, err := fit(s.m, x, y)
	if err != nil {
		return err
	}
	s.m, s.d, s.labels = m, s.d.WithPoints(s.d.ID+1, x, y, edited), append(s.labels, label)
	return nil
}
func (s *editSession) Go(string, func(context.Context, func([]byte))) error { return nil }
func (s *editSession) Latest() (*view.Snapshot, <-chan struct{})            { return nil, nil }

// op runs the view's op of that name on s.
func op(t *testing.T, s view.Session, c wire.Command) (string, error) {
	t.Helper()
	o, ok := view.FindOp(New(), c.Op)
	if !ok || o.Apply == nil || !o.Edits {
		t.Fatalf("%s: not an editing op of the regression view", c.Op)
	}
	return o.Apply(s, c)
}

// TestDataEdits: the data-point edits add, move and remove a point of
// the working data and put the original set back, each refitting the
// model to the new points with its parameters kept; their refusals count
// points from 1.
func TestDataEdits(t *testing.T) {
	d := view.NewData(1, dataset.Step())
	n, _, _ := d.Dims()
	m := engine.RandomModel(rand.New(rand.NewPCG(1, 2)), n, []int{1, 1, 1}, []string{"rbf", "rbf"}, 5)
	m, err := engine.WithData(m, d.X, d.Y)
	if err != nil {
		t.Fatal(err)
	}
	s := &editSession{m: m, d: d}
	idx := func(i int) *int { return &i }
	if msg, err := op(t, s, wire.Command{Op: "add_data", X: []float64{0.25}, Y: []float64{1.5}}); err != nil || msg != "added data point "+strconv.Itoa(n+1) {
		t.Fatalf("add_data: %q %v", msg, err)
	}
	if r, _ := s.m.X.Dims(); r != n+1 || s.d.X.At(n, 0) != 0.25 || s.d.Y.At(n, 0) != 1.5 || !s.d.Edited {
		t.Fatalf("after add_data: model rows %d, point (%v, %v), edited %v", r, s.d.X.At(n, 0), s.d.Y.At(n, 0), s.d.Edited)
	}
	if _, err := op(t, s, wire.Command{Op: "move_data", Index: idx(0), Y: []float64{-2}}); err != nil || s.d.Y.At(0, 0) != -2 || s.m.Y.At(0, 0) != -2 {
		t.Fatalf("move_data: %v, y[0] %v (model %v)", err, s.d.Y.At(0, 0), s.m.Y.At(0, 0))
	}
	if _, err := op(t, s, wire.Command{Op: "remove_data", Index: idx(n + 5)}); err == nil || !strings.Contains(err.Error(), "there is no data point "+strconv.Itoa(n+6)) {
		t.Errorf("remove_data past the end: %v", err)
	}
	if _, err := op(t, s, wire.Command{Op: "remove_data", Index: idx(1)}); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.m.X.Dims(); r != n {
		t.Errorf("after remove_data: %d rows, want %d", r, n)
	}
	if _, err := op(t, s, wire.Command{Op: "reset_data"}); err != nil || s.d.Edited || !mat.Equal(s.d.Y, d.Y) || !mat.Equal(s.m.Y, d.Y) {
		t.Errorf("reset_data: %v, edited %v", err, s.d.Edited)
	}
	want := []string{"addition of a data point", "move of data point 1", "removal of data point 2", "data reset"}
	if strings.Join(s.labels, "; ") != strings.Join(want, "; ") {
		t.Errorf("edits %q, want %q", s.labels, want)
	}
	// Data of two inputs cannot be edited from the page.
	wide := view.NewData(1, &dataset.Dataset{Name: "wide", X: mat.NewDense(3, 2, []float64{0, 1, 2, 3, 4, 5}), Y: mat.NewDense(3, 1, []float64{0, 1, 2})})
	if _, err := op(t, &editSession{m: m, d: wide}, wire.Command{Op: "add_data", X: []float64{0}, Y: []float64{0}}); err == nil || !strings.Contains(err.Error(), "2 input(s) and 1 output(s)") {
		t.Errorf("add_data on 2 inputs: %v", err)
	}
}
