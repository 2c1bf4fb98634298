package dataset

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteCSV writes ds by the conventions ReadCSV reads (CSVConventions):
// its inputs (named x_NAME unless their name starts with x), outputs
// (y_NAME), ground truth (truth_NAME), label columns (label_NAME), and a
// split column when it has a test set; training rows first. An
// autoencoder's inputs are left out: they are its outputs. Each column
// of a role with a unit says it, "y_ap1 [dBm]". Reading the file back
// gives ds's values and units, names aside.
func WriteCSV(w io.Writer, ds *Dataset) error {
	nTrain, nTest := ds.Rows()
	n := nTrain + nTest
	_, q := ds.X.Dims()
	_, d := ds.Y.Dims()
	auto := ds.IsAutoencoder()
	var header []string
	if !auto {
		header = append(header, withUnits(prefixNames("x", ds.InputNames, q), ds.InputUnit)...)
	}
	header = append(header, withUnits(prefixNames("y", ds.OutputNames, d), ds.OutputUnit)...)
	p := 0
	if ds.Truth != nil {
		_, p = ds.Truth.Dims()
		header = append(header, withUnits(prefixNames("truth", ds.TruthNames, p), ds.TruthUnit)...)
	}
	for _, c := range ds.Columns {
		header = append(header, prefixNames("label", []string{c.Name}, 1)...)
	}
	if nTest > 0 {
		header = append(header, "split")
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	rec := make([]string, 0, len(header))
	for i := range n {
		rec = rec[:0]
		x, y, split := ds.X, ds.Y, "train"
		r := i
		if i >= nTrain {
			x, y, split, r = ds.XTest, ds.YTest, "test", i-nTrain
		}
		if !auto {
			for j := range q {
				rec = append(rec, f(x.At(r, j)))
			}
		}
		for j := range d {
			rec = append(rec, f(y.At(r, j)))
		}
		for j := range p {
			rec = append(rec, f(ds.Truth.At(i, j)))
		}
		for _, c := range ds.Columns {
			if c.Categories != nil {
				rec = append(rec, c.Categories[int(c.Values[i])])
			} else {
				rec = append(rec, f(c.Values[i]))
			}
		}
		if nTest > 0 {
			rec = append(rec, split)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// prefixNames returns k column names that start with prefix: names' own
// when they do, else prefix_NAME (prefix1… for missing names).
func prefixNames(prefix string, names []string, k int) []string {
	out := make([]string, k)
	for j := range out {
		switch {
		case j >= len(names) || names[j] == "":
			out[j] = fmt.Sprintf("%s%d", prefix, j+1)
		case strings.HasPrefix(names[j], prefix):
			out[j] = names[j]
		default:
			out[j] = prefix + "_" + names[j]
		}
	}
	return out
}

// withUnits gives each of names the unit, "y_ap1 [dBm]"; none when unit is "".
func withUnits(names []string, unit string) []string {
	if unit != "" {
		for i, n := range names {
			names[i] = Header(n, unit)
		}
	}
	return names
}
