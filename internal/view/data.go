package view

import (
	"dgpviz/internal/dataset"

	"gonum.org/v1/gonum/mat"
)

// Data is a session's data set in model units. It is never changed once
// made: an edit of the data points makes a new one, so undo states and
// snapshots can share it.
type Data struct {
	ID           int              // the session's data version (frames name the data they were fitted to)
	Set          *dataset.Dataset // the data set as loaded, in original units
	NormX, NormY dataset.Normalizer
	X, Y         *mat.Dense // the working data, normalised: Set's, or edited
	Edited       bool       // X, Y are not Set's
}

// NewData normalises ds (each column to mean 0 and variance 1) as data
// version id.
func NewData(id int, ds *dataset.Dataset) *Data {
	d := &Data{ID: id, Set: ds, NormX: dataset.FitNormalizer(ds.X), NormY: dataset.FitNormalizer(ds.Y)}
	d.X, d.Y = d.NormX.Apply(ds.X), d.NormY.Apply(ds.Y)
	return d
}

// WithPoints returns a new version id of d with working data x, y (model
// units; the normalisation stays d's, so that an edit moves nothing else).
func (d *Data) WithPoints(id int, x, y *mat.Dense, edited bool) *Data {
	nd := *d
	nd.ID, nd.X, nd.Y, nd.Edited = id, x, y, edited
	return &nd
}

// Dims returns the rows, inputs and outputs of the working data.
func (d *Data) Dims() (n, q, dy int) {
	n, q = d.X.Dims()
	_, dy = d.Y.Dims()
	return n, q, dy
}

// Original returns the working data in original units (copies).
func (d *Data) Original() (x, y *mat.Dense) {
	return d.NormX.UndoMean(d.X), d.NormY.UndoMean(d.Y)
}
