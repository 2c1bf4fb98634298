package latent

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"dgpviz/internal/dataset"

	"gonum.org/v1/gonum/mat"
)

// LayerMessages is one layer's messages for export or drawing.
type LayerMessages struct {
	Name      string     // e.g. "layer1"
	Mean, Var *mat.Dense // N × Q
	// Unit is the unit of the means (dataset.UnitName or
	// dataset.LatentUnit; "" for latent): the variances' is its square.
	Unit string
	// Columns name the columns (dataset.LayerColumns: the data's outputs'
	// names for the last layer); nil: Name and the dimension, "layer1_dim2".
	Columns []string
}

// columns returns the names of l's q columns.
func (l LayerMessages) columns(q int) []string {
	if len(l.Columns) == q {
		return l.Columns
	}
	out := make([]string, q)
	for k := range out {
		out[k] = fmt.Sprintf("%s_dim%d", l.Name, k+1)
	}
	return out
}

// Table is a latent export: one row per point, training points then
// held-out ones.
type Table struct {
	InputNames []string
	Inputs     *mat.Dense // N × q, the data's original units
	// InputUnit and TruthUnit are the units of the inputs and the ground
	// truth ("" when the data do not name them).
	InputUnit, TruthUnit string
	// Split, when not nil, says "train" or "test" per row.
	Split []string
	// Truth, when not nil, holds the ground truth (N × P), named by
	// TruthNames: for display and judging, never used for fitting.
	Truth      *mat.Dense
	TruthNames []string
	Layers     []LayerMessages // every layer's messages at the rows, in their units
}

// WriteCSV writes the table: the input columns, then split and the ground
// truth's columns when present, then for every layer its means and variances
// (layer1_dim1_mean, …, layer1_dim1_var, …, the last layer's by the data's
// output names, y_ap1_mean: LayerMessages.Columns; layers and dimensions counted
// from 1), every header but split's with its unit (dataset.Header:
// "time [s]", "layer1_dim1_mean [latent]", "y_ap1_var [dBm²]").
func WriteCSV(w io.Writer, t Table) error {
	n, q := t.Inputs.Dims()
	if len(t.InputNames) != q {
		return fmt.Errorf("%d input names for %d input columns", len(t.InputNames), q)
	}
	if t.Split != nil && len(t.Split) != n {
		return fmt.Errorf("%d split labels for %d rows", len(t.Split), n)
	}
	if t.Truth != nil {
		if r, c := t.Truth.Dims(); r != n || c != len(t.TruthNames) {
			return fmt.Errorf("the ground truth is %d×%d with %d names, want %d rows", r, c, len(t.TruthNames), n)
		}
	}
	var header []string
	for _, name := range t.InputNames {
		header = append(header, dataset.Header(dataset.ColumnName(name), dataset.UnitName(t.InputUnit)))
	}
	if t.Split != nil {
		header = append(header, "split")
	}
	if t.Truth != nil {
		for _, name := range t.TruthNames {
			header = append(header, dataset.Header(name, dataset.UnitName(t.TruthUnit)))
		}
	}
	for _, l := range t.Layers {
		r, c := l.Mean.Dims()
		if r != n {
			return fmt.Errorf("layer %s has %d rows, inputs %d", l.Name, r, n)
		}
		u := l.Unit
		if u == "" {
			u = dataset.LatentUnit
		}
		cols := l.columns(c)
		for _, col := range cols {
			header = append(header, dataset.Header(col+"_mean", u))
		}
		for _, col := range cols {
			header = append(header, dataset.Header(col+"_var", dataset.SquaredUnit(u)))
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	row := make([]string, 0, len(header))
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for i := 0; i < n; i++ {
		row = row[:0]
		for k := 0; k < q; k++ {
			row = append(row, f(t.Inputs.At(i, k)))
		}
		if t.Split != nil {
			row = append(row, t.Split[i])
		}
		if t.Truth != nil {
			for k := range t.TruthNames {
				row = append(row, f(t.Truth.At(i, k)))
			}
		}
		for _, l := range t.Layers {
			_, c := l.Mean.Dims()
			for k := 0; k < c; k++ {
				row = append(row, f(l.Mean.At(i, k)))
			}
			for k := 0; k < c; k++ {
				row = append(row, f(l.Var.At(i, k)))
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return nil
}
