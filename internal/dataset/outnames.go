package dataset

import (
	"fmt"
	"strings"
)

// The columns of the commands' and the page's outputs are named as the
// data name them: the inputs by their own names, the last layer's message
// by the outputs' names with the moment after it ("y_ap1_mean",
// "y_ap1_var"), a hidden layer's by layer and dimension, both counted from
// 1 ("layer1_dim2_mean"). Headers add the unit in brackets (Header).

// ColumnName is a column's name without a unit in brackets at its end
// ("y_ap1 [dBm]" → "y_ap1", as SplitUnit reads headers): outputs put the
// unit back, after the moment. A name SplitUnit refuses is kept whole.
func ColumnName(name string) string {
	if n, _, err := SplitUnit(name); err == nil {
		return n
	}
	return strings.TrimSpace(name)
}

// InputColumns returns the names of q input columns: names' (ColumnName),
// or x1…xq when names are not one per column.
func InputColumns(names []string, q int) []string { return columns(names, q, "x") }

// LayerColumns returns the names of the d columns of layer i's message
// (counted from 0) in a model of the given number of layers: for the last
// layer the outputs' names (ColumnName; y1…yd when outputNames are not one
// per column), for a hidden layer layer{i+1}_dim1…layer{i+1}_dim{d}.
func LayerColumns(i, layers, d int, outputNames []string) []string {
	if i == layers-1 {
		return columns(outputNames, d, "y")
	}
	out := make([]string, d)
	for k := range out {
		out[k] = fmt.Sprintf("layer%d_dim%d", i+1, k+1)
	}
	return out
}

func columns(names []string, n int, prefix string) []string {
	out := make([]string, n)
	for k := range out {
		if len(names) == n {
			out[k] = ColumnName(names[k])
		}
		if out[k] == "" {
			out[k] = fmt.Sprintf("%s%d", prefix, k+1)
		}
	}
	return out
}
