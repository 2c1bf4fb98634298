package modelfile

import (
	"fmt"

	"dgpviz/internal/dataset"
)

// Shape returns the architecture of the file's model: the widths of its
// hidden layers and the most inducing points of any layer.
func (f *File) Shape() (hidden []int, inducing int) {
	m := f.Model
	hidden = make([]int, 0, len(m.Layers)-1)
	for i, l := range m.Layers {
		mz, _, d := l.Dims()
		inducing = max(inducing, mz)
		if i+1 < len(m.Layers) {
			hidden = append(hidden, d)
		}
	}
	return hidden, inducing
}

// Originals returns the file's data in original units as a data set
// named name, with the normalisers that take them to the model's data
// (the identity where the file has none). A file that refers to a public
// data set gives that data set's originals exactly, so that a model
// saved from them refers to the data set again.
func (f *File) Originals(name string) (ds *dataset.Dataset, nx, ny dataset.Normalizer, err error) {
	m := f.Model
	n, q := m.X.Dims()
	_, dy := m.Y.Dims()
	nx, ny = f.NormX, f.NormY
	if nx.Mean == nil {
		nx = identity(q)
	}
	if ny.Mean == nil {
		ny = identity(dy)
	}
	if len(nx.Mean) != q || len(ny.Mean) != dy {
		return nil, nx, ny, fmt.Errorf("the model file's normalization has %d and %d columns, its data %d and %d", len(nx.Mean), len(ny.Mean), q, dy)
	}
	ds = &dataset.Dataset{
		Name:        name,
		Description: fmt.Sprintf("the data of a loaded model file (%d rows, %d → %d)", n, q, dy),
		X:           nx.UndoMean(m.X), Y: ny.UndoMean(m.Y),
		InputNames: columnNames("x", q), OutputNames: columnNames("y", dy),
		InputUnit: f.Info.XUnit, OutputUnit: f.Info.YUnit,
	}
	if src := f.Data; src != nil && NormalisesTo(src.X, nx, m.X) && NormalisesTo(src.Y, ny, m.Y) {
		ds.X, ds.Y, ds.Source = src.X, src.Y, src.Source
	}
	return ds, nx, ny, nil
}

func columnNames(prefix string, k int) []string {
	out := make([]string, k)
	for j := range out {
		out[j] = fmt.Sprintf("%s%d", prefix, j+1)
	}
	return out
}
