package latent

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// Layer is one hidden layer's latent messages for export.
type Layer struct {
	Name      string     // e.g. "layer1"
	Mean, Var *mat.Dense // N × Q
}

// Table is a latent export: one row per point, training points then
// held-out ones.
type Table struct {
	InputNames []string
	Inputs     *mat.Dense // N × q, the data's original units
	// Split, when not nil, says "train" or "test" per row.
	Split []string
	// Positions, when not nil, holds the true positions (N × 2, metres):
	// for display and judging, never used for fitting.
	Positions *mat.Dense
	Layers    []Layer // every layer's messages at the rows (model units)
}

// WriteCSV writes the table: the input columns, then split, true_x,
// true_y when present, then for every layer its means and variances
// (layer1_mean1, …, layer1_var1, …: layers and dimensions counted from 1).
func WriteCSV(w io.Writer, t Table) error {
	n, q := t.Inputs.Dims()
	if len(t.InputNames) != q {
		return fmt.Errorf("latent: %d input names for %d input columns", len(t.InputNames), q)
	}
	if t.Split != nil && len(t.Split) != n {
		return fmt.Errorf("latent: %d split labels for %d rows", len(t.Split), n)
	}
	if t.Positions != nil {
		if r, c := t.Positions.Dims(); r != n || c != 2 {
			return fmt.Errorf("latent: positions are %d×%d, want %d×2", r, c, n)
		}
	}
	header := append([]string(nil), t.InputNames...)
	if t.Split != nil {
		header = append(header, "split")
	}
	if t.Positions != nil {
		header = append(header, "true_x", "true_y")
	}
	for _, l := range t.Layers {
		r, c := l.Mean.Dims()
		if r != n {
			return fmt.Errorf("latent: layer %s has %d rows, inputs %d", l.Name, r, n)
		}
		for k := 0; k < c; k++ {
			header = append(header, fmt.Sprintf("%s_mean%d", l.Name, k+1))
		}
		for k := 0; k < c; k++ {
			header = append(header, fmt.Sprintf("%s_var%d", l.Name, k+1))
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("latent: %w", err)
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
		if t.Positions != nil {
			row = append(row, f(t.Positions.At(i, 0)), f(t.Positions.At(i, 1)))
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
			return fmt.Errorf("latent: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("latent: %w", err)
	}
	return nil
}
