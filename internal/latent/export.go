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

// WriteCSV writes one row per point: the input columns, then for every layer
// its means and variances (columns named layer1_mean0, layer1_var0, …).
func WriteCSV(w io.Writer, inputNames []string, inputs *mat.Dense, layers []Layer) error {
	n, q := inputs.Dims()
	if len(inputNames) != q {
		return fmt.Errorf("latent: %d input names for %d input columns", len(inputNames), q)
	}
	header := append([]string(nil), inputNames...)
	for _, l := range layers {
		r, c := l.Mean.Dims()
		if r != n {
			return fmt.Errorf("latent: layer %s has %d rows, inputs %d", l.Name, r, n)
		}
		for k := 0; k < c; k++ {
			header = append(header, fmt.Sprintf("%s_mean%d", l.Name, k))
		}
		for k := 0; k < c; k++ {
			header = append(header, fmt.Sprintf("%s_var%d", l.Name, k))
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
			row = append(row, f(inputs.At(i, k)))
		}
		for _, l := range layers {
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
