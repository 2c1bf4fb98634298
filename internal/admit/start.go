package admit

import (
	"fmt"
	"slices"

	"dgpviz/internal/allviews"
	"dgpviz/internal/dataset"
	"dgpviz/internal/modelfile"
)

// A Start is what a session made from an upload starts with: its
// configuration, its data set (in original units, private to it), and
// what it is estimated to hold.
type Start struct {
	Config   Config
	Data     *dataset.Dataset
	Estimate Estimate
	// NormX and NormY take Data to the model's data (StartModel).
	NormX, NormY dataset.Normalizer
	// Note says, for people, how the configuration differs from the one
	// asked for (StartData: fewer inducing points), or "".
	Note string
}

// StartModel checks the model of mf against the limits and budgets of l
// and returns the start of a paused session of def's settings that
// carries on from it, its data set named name.
func StartModel(mf *modelfile.File, name string, def Config, l Limits) (Start, error) {
	m := mf.Model
	if err := m.Validate(); err != nil {
		return Start{}, fmt.Errorf("the model file is not a valid model: %w", err)
	}
	n, q := m.X.Dims()
	_, dy := m.Y.Dims()
	hidden, inducing := mf.Shape()
	if err := l.CheckModel(n, len(m.Layers), hidden, inducing); err != nil {
		return Start{}, err
	}
	ds, nx, ny, err := mf.Originals(name)
	if err != nil {
		return Start{}, err
	}
	c := def
	c.Dataset, c.Hidden, c.Inducing, c.Play = ds.Name, hidden, inducing, false
	c.Frozen = slices.Clone(c.Frozen)
	e := EstimateStarted(c, ds, n, q, dy)
	if err := CheckBudget(e, l); err != nil {
		return Start{}, err
	}
	return Start{Config: c, Data: ds, Estimate: e, NormX: nx, NormY: ny}, nil
}

// StartData checks an uploaded data set ds against the limits of l, names
// it name and returns the start of a session that fits it: in the view
// its shape chooses, with that view's preset or def's architecture, and
// with fewer inducing points when that is what fits the budgets
// (FitWithin). The fit starts as soon as the page opens, as the demo's
// does.
func StartData(ds *dataset.Dataset, name string, def Config, l Limits) (Start, error) {
	n, _ := ds.X.Dims()
	switch {
	case n > l.MaxRows:
		return Start{}, fmt.Errorf("the data has %d rows, more than the limit of %d rows (the server's %s raises it)", n, l.MaxRows, dataset.RowsFlag)
	case n < dataset.MinTrainRows:
		return Start{}, fmt.Errorf("the data: %w", dataset.TooFewRows(n))
	}
	ds.Name = name
	c := WithPreset(def, allviews.For(ds, nil), def, l)
	c.Dataset = ds.Name
	c.Frozen = slices.Clone(c.Frozen)
	c, e, note, err := FitWithin(c, ds, l)
	if err != nil {
		return Start{}, err
	}
	return Start{Config: c, Data: ds, Estimate: e, Note: note}, nil
}
