package dataset

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestUnitWords(t *testing.T) {
	for _, c := range []struct{ unit, name, squared string }{
		{"dBm", "dBm", "dBm²"},
		{"", "original units", "(original units)²"},
		{"grey level", "grey level", "(grey level)²"},
		{"m/s", "m/s", "(m/s)²"},
		{LatentUnit, "latent", "latent"},
	} {
		if n := UnitName(c.unit); n != c.name || SquaredUnit(n) != c.squared {
			t.Errorf("%q: name %q squared %q, want %q and %q", c.unit, n, SquaredUnit(n), c.name, c.squared)
		}
	}
	if h := Header("time", "s"); h != "time [s]" {
		t.Errorf("header %q", h)
	}
}

func TestSplitUnit(t *testing.T) {
	for _, c := range []struct{ header, name, unit, err string }{
		{"y_ap1 [dBm]", "y_ap1", "dBm", ""},
		{"  x_time[s] ", "x_time", "s", ""},
		{"y [ grey level ]", "y", "grey level", ""},
		{"y_speed [m/s]", "y_speed", "m/s", ""},
		{"y1", "y1", "", ""},
		{"y [µS·cm⁻¹]", "y", "µS·cm⁻¹", ""},
		{"[dBm]", "", "", "no column name"},
		{"y []", "", "", "empty brackets"},
		{"y [dBm", "", "", "brackets at the end"},
		{"y dBm]", "", "", "brackets at the end"},
		{"y[1] [dBm]", "", "", "one bracketed unit"},
		{"y [[dBm]]", "", "", "one bracketed unit"},
		{"y [a\tb]", "", "", "does not print"},
		{"y [" + strings.Repeat("m", MaxUnitBytes+1) + "]", "", "", "more than the limit of 64"},
	} {
		name, unit, err := SplitUnit(c.header)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.header, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one saying %q", c.header, err, c.err)
		case name != c.name || unit != c.unit:
			t.Errorf("%q: name %q unit %q, want %q and %q", c.header, name, unit, c.name, c.unit)
		}
	}
}

// TestCSVUnits reads the units of a CSV's header into the data set: one for
// the inputs, one for the outputs, one for the ground truth, the names
// without them.
func TestCSVUnits(t *testing.T) {
	const text = "x_time [s],y_ap1 [dBm],y_ap2 [dBm],truth_x [m],truth_y [m],label_floor [level],split\n" +
		"0,-50,-60,1,2,a,train\n1.5,-51,-61,1.5,2,a,train\n3,-52,-62,2,2,b,test\n"
	ds, err := ReadCSV(strings.NewReader(text), "walk.csv", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.InputUnit != "s" || ds.OutputUnit != "dBm" || ds.TruthUnit != "m" {
		t.Errorf("units %q %q %q, want s, dBm and m", ds.InputUnit, ds.OutputUnit, ds.TruthUnit)
	}
	if !slices.Equal(ds.InputNames, []string{"x_time"}) || !slices.Equal(ds.OutputNames, []string{"y_ap1", "y_ap2"}) ||
		!slices.Equal(ds.TruthNames, []string{"truth_x", "truth_y"}) || ds.Columns[0].Name != "label_floor" {
		t.Errorf("names %v %v %v %q, want them without their units", ds.InputNames, ds.OutputNames, ds.TruthNames, ds.Columns[0].Name)
	}
	// -outputs names a column by its name alone.
	ds, err = ReadCSV(strings.NewReader(text), "walk.csv", CSVOptions{OutputColumns: []string{"y_ap2"}})
	if err != nil || ds.OutputUnit != "dBm" || !slices.Equal(ds.OutputNames, []string{"y_ap2"}) {
		t.Errorf("-outputs y_ap2: %v, %v [%s]", err, ds.OutputNames, ds.OutputUnit)
	}
	// An autoencoder's inputs are its outputs, unit and all.
	ds, err = ReadCSV(strings.NewReader("y1 [grey level],y2 [grey level]\n1,2\n3,4\n"), "faces.csv", CSVOptions{})
	if err != nil || ds.InputUnit != "grey level" || ds.OutputUnit != "grey level" {
		t.Errorf("autoencoder: %v, units %q %q", err, ds.InputUnit, ds.OutputUnit)
	}
	for _, c := range []struct{ header, want string }{
		{"x,y1 [dBm],y2 [s]", `output columns "y1" [dBm] and "y2" [s] have different units`},
		{"x,y1 [dBm],y2", `output column "y1" has the unit [dBm] and "y2" none`},
		{"x,y1,y2 [dBm]", `output column "y2" has the unit [dBm] and "y1" none`},
		{"x [s],x2 [h],y", `input columns "x" [s] and "x2" [h] have different units`},
		{"x,y [dBm],y [s]", `repeats the name "y"`},
		{"x,y [dBm", `line 1: column 2: header "y [dBm": a unit goes in brackets at the end`},
	} {
		_, err := ReadCSV(strings.NewReader(c.header+"\n1,2,3\n2,3,4\n"), "bad.csv", CSVOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %s", c.header, err, c.want)
		}
	}
}

// TestColumnUnits reads units from the column names of NumPy and Parquet
// files as from a CSV's header.
func TestColumnUnits(t *testing.T) {
	cols := []column{{name: "x_time [s]", num: []float64{0, 1, 2}}, {name: "y_ap1 [dBm]", num: []float64{-50, -51, -52}}, {name: "y_ap2 [dBm]", num: []float64{-60, -61, -62}}}
	ds, err := columnsDataset(cols, "npy", "walk.npy", "NumPy file", "npy walk.npy", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.InputUnit != "s" || ds.OutputUnit != "dBm" || !slices.Equal(ds.OutputNames, []string{"y_ap1", "y_ap2"}) {
		t.Errorf("units %q %q, outputs %v", ds.InputUnit, ds.OutputUnit, ds.OutputNames)
	}
	cols[2].name = "y_ap2 [mW]"
	if _, err := columnsDataset(cols, "npy", "walk.npy", "NumPy file", "npy walk.npy", CSVOptions{}); err == nil || !strings.Contains(err.Error(), "different units") {
		t.Errorf("mixed units: %v", err)
	}
}

// FuzzSplitUnit checks the header parser on any text: a header it accepts
// has a name, and a unit that prints and that Header writes back to a
// header it reads the same.
func FuzzSplitUnit(f *testing.F) {
	for _, s := range []string{"y_ap1 [dBm]", "x_time[s]", "y", "[s]", "y []", "y [[s]]", "y [a\x00]", "y [m/s]", " y [ s ] ", "y]", "y ["} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		name, unit, err := SplitUnit(h)
		if err != nil {
			return
		}
		if name == "" && strings.TrimSpace(h) != "" {
			t.Fatalf("%q: no name", h)
		}
		if unit == "" {
			return
		}
		if len(unit) > MaxUnitBytes || strings.ContainsAny(unit, "[]") || strings.ContainsFunc(unit, unicode.IsControl) {
			t.Fatalf("%q: unit %q", h, unit)
		}
		n2, u2, err := SplitUnit(Header(name, unit))
		if err != nil || n2 != name || u2 != unit {
			t.Fatalf("%q: Header(%q, %q) reads back as %q %q %v", h, name, unit, n2, u2, err)
		}
	})
}

// TestTooFewRows: one rule for the fewest rows, in words that count right.
func TestTooFewRows(t *testing.T) {
	for n, want := range map[int]string{0: "0 training rows: a fit needs at least 2", 1: "1 training row: a fit needs at least 2", 2: "", 30: ""} {
		err := TooFewRows(n)
		if got := fmt.Sprint(err); (want == "" && err != nil) || (want != "" && got != want) {
			t.Errorf("%d rows: %v, want %q", n, err, want)
		}
	}
	if Count(1, "row") != "1 row" || Count(3, "row") != "3 rows" || Count(0, "row") != "0 rows" {
		t.Errorf("Count: %q %q %q", Count(1, "row"), Count(3, "row"), Count(0, "row"))
	}
	// NumPy and Parquet files by the same rule as a CSV.
	cols := []column{{name: "x", num: []float64{1}}, {name: "y", num: []float64{2}}}
	if _, err := columnsDataset(cols, "npy", "one.npy", "NumPy file", "npy one.npy", CSVOptions{}); err == nil || !strings.Contains(err.Error(), "1 training row: a fit needs at least 2") {
		t.Errorf("one-row NumPy file: %v", err)
	}
}
