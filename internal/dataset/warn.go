package dataset

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Warnings says what about a data set will make a fit degenerate though it
// is valid: too few rows to learn anything, or a column that never changes
// (a constant output can only be learnt as its mean, and its noise then
// shrinks without bound; a constant input carries no information). Loaders
// accept such data; the command line and the page show the warnings.
func Warnings(ds *Dataset) []string {
	var out []string
	n, _ := ds.X.Dims()
	if n < 5 {
		out = append(out, fmt.Sprintf("%s has only %d rows: a fit to so few points says little", ds.Name, n))
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
		for j, name := range ds.OutputNames {
			if constant(ds.Y, j) {
				out = append(out, fmt.Sprintf("output %q of %s is constant: the model can only learn its mean, and its noise variance shrinks towards 0", name, ds.Name))
			}
		}
		for j, name := range ds.InputNames {
			if constant(ds.X, j) {
				out = append(out, fmt.Sprintf("input %q of %s is constant: it carries no information", name, ds.Name))
			}
		}
	}
	return out
}
