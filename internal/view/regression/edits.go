package regression

import (
	"errors"
	"fmt"
	"slices"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"

	"gonum.org/v1/gonum/mat"
)

// The data-point edits: the page adds, removes and moves the points of
// data with one input and one output, and puts the original set back.
// Each is an undoable edit of the session (view.Session.EditData); the
// model keeps its parameters and is refitted to the new points only
// through its data terms (engine.WithData).

// dataOps are the view's data-point edits.
func dataOps() []view.Op {
	return []view.Op{
		{Name: "add_data", Apply: addData, Edits: true},
		{Name: "remove_data", Apply: removeData, Edits: true},
		{Name: "move_data", Apply: moveData, Edits: true},
		{Name: "reset_data", Apply: resetData, Edits: true},
	}
}

// errNotEditable says why a data set's points cannot be edited.
var errNotEditable = errors.New("data points can be edited on data sets with one input and one output")

// editableData returns the session's working data, or an error when its
// points cannot be edited from the page.
func editableData(s view.Session, op string) (x, y []float64, err error) {
	d := s.Data()
	_, q, dd := d.Dims()
	if q != 1 || dd != 1 {
		return nil, nil, fmt.Errorf("%s: %w; %s has %d input(s) and %d output(s)", op, errNotEditable, d.Set.Name, q, dd)
	}
	return mat.Col(nil, 0, d.X), mat.Col(nil, 0, d.Y), nil
}

// setData makes x, y (normalised units; the normalisation stays the
// session's) the working data: the model keeps its parameters.
func setData(s view.Session, label string, x, y []float64, edited bool) error {
	n := len(x)
	return s.EditData(label, mat.NewDense(n, 1, x), mat.NewDense(n, 1, y), edited, engine.WithData)
}

func addData(s view.Session, c wire.Command) (string, error) {
	x, y, err := editableData(s, c.Op)
	if err != nil {
		return "", err
	}
	if len(c.X) != 1 || len(c.Y) != 1 {
		return "", fmt.Errorf("add_data: give \"x\" and \"y\", one value each (the model's normalised units)")
	}
	if err := setData(s, "addition of a data point", append(x, c.X[0]), append(y, c.Y[0]), true); err != nil {
		return "", err
	}
	return fmt.Sprintf("added data point %d", len(x)+1), nil
}

func dataIndex(c wire.Command, n int) (int, error) {
	if c.Index == nil {
		return 0, fmt.Errorf("%s: missing \"index\"", c.Op)
	}
	if i := *c.Index; i < 0 || i >= n {
		return 0, fmt.Errorf("%s: there is no data point %d (there are %d)", c.Op, i+1, n)
	}
	return *c.Index, nil
}

// dataPoint returns the editable data and the index of the command's point.
func dataPoint(s view.Session, c wire.Command) (x, y []float64, i int, err error) {
	if x, y, err = editableData(s, c.Op); err != nil {
		return nil, nil, 0, err
	}
	i, err = dataIndex(c, len(x))
	return x, y, i, err
}

func removeData(s view.Session, c wire.Command) (string, error) {
	x, y, i, err := dataPoint(s, c)
	if err != nil {
		return "", err
	}
	if len(x) <= dataset.MinTrainRows {
		return "", fmt.Errorf("remove_data: a data set keeps at least %d points", dataset.MinTrainRows)
	}
	if err := setData(s, fmt.Sprintf("removal of data point %d", i+1), slices.Delete(x, i, i+1), slices.Delete(y, i, i+1), true); err != nil {
		return "", err
	}
	return fmt.Sprintf("removed data point %d", i+1), nil
}

func moveData(s view.Session, c wire.Command) (string, error) {
	x, y, i, err := dataPoint(s, c)
	if err != nil {
		return "", err
	}
	if len(c.X) > 1 || len(c.Y) > 1 || (c.X == nil && c.Y == nil) {
		return "", fmt.Errorf("move_data: give \"x\" and/or \"y\", one value each")
	}
	if c.X != nil {
		x[i] = c.X[0]
	}
	if c.Y != nil {
		y[i] = c.Y[0]
	}
	if err := setData(s, fmt.Sprintf("move of data point %d", i+1), x, y, true); err != nil {
		return "", err
	}
	return fmt.Sprintf("moved data point %d", i+1), nil
}

func resetData(s view.Session, c wire.Command) (string, error) {
	if _, _, err := editableData(s, c.Op); err != nil {
		return "", err
	}
	d := s.Data()
	if !d.Edited {
		return "the data are the original set", nil
	}
	x, y := d.NormX.Apply(d.Set.X), d.NormY.Apply(d.Set.Y)
	if err := setData(s, "data reset", mat.Col(nil, 0, x), mat.Col(nil, 0, y), false); err != nil {
		return "", err
	}
	return "data reset to the original set", nil
}
