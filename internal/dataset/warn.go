package dataset

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// maxNamedColumns is the most constant columns Warnings names one by one.
const maxNamedColumns = 5

// Warnings says what about a data set will make a fit degenerate though it
// is valid: too few rows to learn anything, or a column that never changes
// (a constant output can only be learnt as its mean, and its noise then
// shrinks without bound; a constant input carries no information). Loaders
// accept such data; the command line and the page show the warnings.
//
// More than maxNamedColumns constant columns (the corner pixels of images)
// are counted in one line rather than named one by one.
func Warnings(ds *Dataset) []string {
	var out []string
	n, _ := ds.X.Dims()
	if n < 5 {
		out = append(out, fmt.Sprintf("%s has only %s: a fit to so few points says little", ds.Name, Count(n, "row")))
	}
	constant := func(a *mat.Dense, j int) bool {
		r, _ := a.Dims()
		for i := 1; i < r; i++ {
			if a.At(i, j) != a.At(0, j) {
				return false
			}
		}
		return true
	}
	if n >= 2 {
		var outs, ins []string
		for j, name := range ds.OutputNames {
			if constant(ds.Y, j) {
				outs = append(outs, name)
			}
		}
		for j, name := range ds.InputNames {
			if constant(ds.X, j) {
				ins = append(ins, name)
			}
		}
		if ds.IsAutoencoder() { // the same columns: say it once
			ins = nil
		}
		switch {
		case len(outs) > maxNamedColumns:
			out = append(out, fmt.Sprintf("%d of the %d outputs of %s are the same in every row: they carry no information, and the model can only learn their mean", len(outs), len(ds.OutputNames), ds.Name))
		default:
			for _, name := range outs {
				out = append(out, fmt.Sprintf("output %q of %s is constant: the model can only learn its mean, and its noise variance shrinks towards 0", name, ds.Name))
			}
		}
		switch {
		case len(ins) > maxNamedColumns:
			out = append(out, fmt.Sprintf("%d of the %d inputs of %s are the same in every row: they carry no information", len(ins), len(ds.InputNames), ds.Name))
		default:
			for _, name := range ins {
				out = append(out, fmt.Sprintf("input %q of %s is constant: it carries no information", name, ds.Name))
			}
		}
	}
	return out
}
