package dataset

import (
	"dgpviz/internal/wire"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// column is one named column of a columnar file (NumPy, Parquet): numbers
// or text, one per row.
type column struct {
	name string
	num  []float64 // nil for a text column
	text []string
}

func (c *column) len() int {
	if c.num != nil {
		return len(c.num)
	}
	return len(c.text)
}

// columnsDataset makes a data set of named columns by the conventions of
// CSVConventions, as ReadCSV does for a CSV's header and rows. The data
// set is named scheme + ":" + name; kind names the file's format in the
// description ("NumPy file"), src the input in errors. A numeric split
// column holds 0 for train and 1 for test.
func columnsDataset(cols []column, scheme, name, kind, src string, opt CSVOptions) (*Dataset, error) {
	errorf := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", src, fmt.Sprintf(format, args...))
	}
	if len(cols) == 0 {
		return nil, errorf("no columns")
	}
	if len(cols) > MaxColumns {
		return nil, errorf("%d columns, more than the limit of %d columns", len(cols), MaxColumns)
	}
	rows := cols[0].len()
	header := make([]string, len(cols))
	units := make([]string, len(cols))
	index := make(map[string]int, len(cols))
	for j, c := range cols {
		if c.len() != rows {
			return nil, errorf("column %q has %d rows, column %q %d", c.name, c.len(), cols[0].name, rows)
		}
		if strings.TrimSpace(c.name) == "" {
			return nil, errorf("column %d has no name", j+1)
		}
		name, unit, err := SplitUnit(c.name)
		if err != nil {
			return nil, errorf("column %d: %v", j+1, err)
		}
		if k, ok := index[name]; ok {
			return nil, errorf("column %d repeats the name %q of column %d", j+1, name, k+1)
		}
		header[j], units[j] = name, unit
		index[name] = j
	}
	if rows == 0 {
		return nil, errorf("no data rows")
	}
	if max := opt.maxRows(); max >= 0 && rows > max {
		return nil, errorf("%d data rows, more than the limit of %d rows (%s raises it)", rows, max, RowsFlag)
	}
	in, out, autoencoder, err := roleColumns(header, index, opt)
	if err != nil {
		return nil, errorf("%v", err)
	}
	if autoencoder {
		in = out
	}
	for _, j := range in {
		for _, k := range out {
			if j == k && !autoencoder {
				return nil, errorf("column %q is both an input and an output", header[j])
			}
		}
	}
	truth := prefixed(header, "truth")
	unitOf, err := dataUnits(header, units, in, out, truth, autoencoder)
	if err != nil {
		return nil, errorf("%v", err)
	}
	for _, idx := range [][]int{in, out, truth} {
		for _, j := range idx {
			c := cols[j]
			if c.num == nil {
				return nil, errorf("column %q holds text, not numbers", header[j])
			}
			for i, v := range c.num {
				if msg := valueProblem(v); msg != "" {
					return nil, errorf("row %d, column %q: %s", i+1, header[j], msg)
				}
			}
		}
	}
	test := make([]bool, rows)
	nTest := 0
	if j, ok := index["split"]; ok {
		c := cols[j]
		for i := range rows {
			switch {
			case c.num != nil && (c.num[i] == 0 || c.num[i] == 1):
				test[i] = c.num[i] == 1
			case c.num == nil && strings.EqualFold(strings.TrimSpace(c.text[i]), "train"):
			case c.num == nil && strings.EqualFold(strings.TrimSpace(c.text[i]), "test"):
				test[i] = true
			default:
				var v string
				if c.num != nil {
					v = fmt.Sprint(c.num[i])
				} else {
					v = fmt.Sprintf("%q", wire.Truncate(c.text[i], 20))
				}
				return nil, errorf("row %d, column \"split\": %s, want train or test (or 0 or 1)", i+1, v)
			}
			if test[i] {
				nTest++
			}
		}
	}
	nTrain := rows - nTest
	if err := TooFewRows(nTrain); err != nil {
		if nTest > 0 {
			return nil, errorf("%v (held out: %s in the test split)", err, Count(nTest, "row"))
		}
		return nil, errorf("%v", err)
	}
	order := make([]int, 0, rows) // training rows first, then test rows, each in file order
	for _, want := range []bool{false, true} {
		for i, t := range test {
			if t == want {
				order = append(order, i)
			}
		}
	}
	gather := func(idx []int, from, to int) *mat.Dense {
		if to == from {
			return nil
		}
		m := mat.NewDense(to-from, len(idx), nil)
		for r, i := range order[from:to] {
			row := m.RawRowView(r)
			for k, j := range idx {
				row[k] = cols[j].num[i]
			}
		}
		return m
	}
	names := func(idx []int) []string {
		s := make([]string, len(idx))
		for i, j := range idx {
			s[i] = header[j]
		}
		return s
	}
	ds := &Dataset{
		Name:        scheme + ":" + name,
		Description: fmt.Sprintf("%s %s: %d rows, %d inputs, %d outputs", kind, name, rows, len(in), len(out)),
		InputNames:  names(in),
		OutputNames: names(out),
		InputUnit:   unitOf[0],
		OutputUnit:  unitOf[1],
		TruthUnit:   unitOf[2],
		Shape:       opt.Shape,
		X:           gather(in, 0, nTrain),
		Y:           gather(out, 0, nTrain),
		XTest:       gather(in, nTrain, rows),
		YTest:       gather(out, nTrain, rows),
	}
	if autoencoder {
		ds.Description = fmt.Sprintf("%s %s: %d rows of %d values, autoencoded", kind, name, rows, len(out))
	}
	if nTest > 0 {
		ds.Description += fmt.Sprintf("; %d train / %d test rows", nTrain, nTest)
	}
	if len(truth) > 0 {
		ds.Truth, ds.TruthNames = gather(truth, 0, rows), names(truth)
	}
	for _, j := range prefixed(header, "label") {
		c := cols[j]
		text := make([]string, rows)
		for r, i := range order {
			if c.num != nil {
				text[r] = fmt.Sprint(c.num[i])
			} else {
				text[r] = strings.TrimSpace(c.text[i])
			}
		}
		ds.Columns = append(ds.Columns, labelColumn(header[j], text))
	}
	return ds, nil
}

// valueProblem is parseNumber's verdict on a number already parsed: ""
// for a finite one of magnitude at most MaxAbsValue.
func valueProblem(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Sprintf("%v is not a finite number", v)
	case math.Abs(v) > MaxAbsValue:
		return fmt.Sprintf("%g is too large (|value| ≤ %g: standardising squares the deviations)", v, MaxAbsValue)
	}
	return ""
}
