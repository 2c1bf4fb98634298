package dataset

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestReadCSVGood(t *testing.T) {
	// testdata/good.csv: CRLF line endings, spaces around fields, a blank
	// line, and an ignored text column "label":
	//	x1, x2 ,label,y
	//	0,1,a,0.5
	//
	//	 1 , 2 ,b, -1.5e1
	//	2,3,c,4
	ds, err := LoadCSV("testdata/good.csv", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Name != "csv:good.csv" {
		t.Errorf("Name = %q, want csv:good.csv", ds.Name)
	}
	if got := strings.Join(ds.InputNames, ","); got != "x1,x2" {
		t.Errorf("InputNames = %s, want x1,x2", got)
	}
	if got := strings.Join(ds.OutputNames, ","); got != "y" {
		t.Errorf("OutputNames = %s, want y", got)
	}
	wantX := mat.NewDense(3, 2, []float64{0, 1, 1, 2, 2, 3})
	wantY := mat.NewDense(3, 1, []float64{0.5, -15, 4})
	if !mat.Equal(ds.X, wantX) || !mat.Equal(ds.Y, wantY) {
		t.Errorf("X = %v, Y = %v; want %v, %v", mat.Formatted(ds.X), mat.Formatted(ds.Y), mat.Formatted(wantX), mat.Formatted(wantY))
	}
	if ds.XTest != nil || ds.YTest != nil || ds.Truth != nil || ds.Imputed != nil {
		t.Error("CSV data has no test set, positions or fill-ins")
	}
	if !strings.Contains(ds.Description, "good.csv") {
		t.Errorf("Description %q does not name the file", ds.Description)
	}
}

func TestReadCSVOptions(t *testing.T) {
	const in = "\uFEFFtime,\"speed\",x_ignored,y,z\n1,2,3,4,5\n6,7,8,9,10\n"
	for _, c := range []struct {
		name         string
		opt          CSVOptions
		inNames      string
		outNames     string
		x0, y0       []float64 // first row
		wantInCols   int
		wantOutCols  int
		wantDescribe string
	}{
		// Explicit lists, in the order given; a quoted header name, a BOM.
		{"explicit", CSVOptions{InputColumns: []string{"speed", "time"}, OutputColumns: []string{"z", "y"}},
			"speed,time", "z,y", []float64{2, 1}, []float64{5, 4}, 2, 2, "2 inputs, 2 outputs"},
		// Explicit inputs, default outputs (columns starting with "y").
		{"inputs only", CSVOptions{InputColumns: []string{" time "}},
			"time", "y", []float64{1}, []float64{4}, 1, 1, "1 inputs, 1 outputs"},
		// Default inputs (x_ignored), explicit outputs.
		{"outputs only", CSVOptions{OutputColumns: []string{"z"}},
			"x_ignored", "z", []float64{3}, []float64{5}, 1, 1, "2 rows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds, err := ReadCSV(strings.NewReader(in), "opts.csv", c.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(ds.InputNames, ","); got != c.inNames {
				t.Errorf("InputNames = %s, want %s", got, c.inNames)
			}
			if got := strings.Join(ds.OutputNames, ","); got != c.outNames {
				t.Errorf("OutputNames = %s, want %s", got, c.outNames)
			}
			if got := mat.Row(nil, 0, ds.X); fmt.Sprint(got) != fmt.Sprint(c.x0) {
				t.Errorf("X[0] = %v, want %v", got, c.x0)
			}
			if got := mat.Row(nil, 0, ds.Y); fmt.Sprint(got) != fmt.Sprint(c.y0) {
				t.Errorf("Y[0] = %v, want %v", got, c.y0)
			}
			if !strings.Contains(ds.Description, c.wantDescribe) {
				t.Errorf("Description %q, want %q", ds.Description, c.wantDescribe)
			}
		})
	}
}

func TestReadCSVErrors(t *testing.T) {
	wide := strings.Repeat("x,", MaxColumns) + "y\n" // MaxColumns+1 columns
	var names []string
	for i := range 300 { // 300 distinct names, none starting with "x"
		names = append(names, fmt.Sprint("a", i))
	}
	wideNoXY := strings.Join(names, ",") + ",b\n1" + strings.Repeat(",1", 300) + "\n"
	var long strings.Builder
	long.WriteString("x,y\n")
	for range MaxRows + 1 {
		long.WriteString("1,2\n")
	}
	for _, c := range []struct {
		name string
		in   string
		opt  CSVOptions
		want string
	}{
		{"empty file", "", CSVOptions{}, "empty file"},
		{"only blank lines", "\n\r\n\n", CSVOptions{}, "empty file"},
		{"header only", "x,y\n", CSVOptions{}, "no data rows"},
		{"missing header", "1,2\n3,4\n", CSVOptions{}, "line 1: missing header row"},
		{"no input column named", "a,y\n1,2\n", CSVOptions{InputColumns: []string{"x"}}, `unknown input column "x"`},
		{"no output column", "x,b\n1,2\n", CSVOptions{}, `no output column: no column name starts with "y"`},
		{"upper case is not default", "X,Y\n1,2\n", CSVOptions{}, "no output column"},
		{"bad split", "x,y,split\n1,2,train\n3,4,validation\n", CSVOptions{}, `line 3, column 3 ("split"): "validation", want train or test`},
		{"all test", "x,y,split\n1,2,test\n", CSVOptions{}, "0 training rows: a fit needs at least 2 (held out: 1 row in the test split)"},
		{"one row", "x,y\n1,2\n", CSVOptions{}, "1 training row: a fit needs at least 2"},
		{"one training row", "x,y,split\n1,2,train\n2,3,test\n3,4,test\n", CSVOptions{}, "1 training row: a fit needs at least 2 (held out: 2 rows in the test split)"},
		{"truth not a number", "x,y,truth_x\n1,2,here\n", CSVOptions{}, `line 2, column 3 ("truth_x"): "here" is not a number`},
		{"shape", "y1,y2,y3\n1,2,3\n", CSVOptions{Shape: [2]int{2, 2}}, "images of 2 × 2 pixels need 4 output columns; the file has 3"},
		{"server's row limit", "x,y\n1,2\n3,4\n5,6\n", CSVOptions{MaxRows: 2}, "line 4: more data rows than the limit of 2 rows (-max-rows raises it)"},
		{"unknown input", "x,y\n1,2\n", CSVOptions{InputColumns: []string{"t"}}, `unknown input column "t" (header: x,y)`},
		{"unknown output", "x,y\n1,2\n", CSVOptions{OutputColumns: []string{"w"}}, `unknown output column "w"`},
		{"listed twice", "x,y\n1,2\n", CSVOptions{InputColumns: []string{"x", "x"}}, `input column "x" listed twice`},
		{"input and output", "x,y\n1,2\n", CSVOptions{InputColumns: []string{"x"}, OutputColumns: []string{"x"}}, `column "x" is both an input and an output`},
		{"duplicate names", "x,y,x\n1,2,3\n", CSVOptions{}, `line 1: header column 3 repeats the name "x" of column 1`},
		{"duplicate after trim", "x, y,y \n1,2,3\n", CSVOptions{}, `header column 3 repeats the name "y"`},
		{"empty name", "x,,y\n1,2,3\n", CSVOptions{}, "line 1: header column 2 has no name"},
		{"ragged short", "x,y\n1,2\n3\n", CSVOptions{}, "line 3: 1 fields, header has 2"},
		{"ragged long", "x,y\n\n1,2,3\n", CSVOptions{}, "line 3: 3 fields, header has 2"},
		{"non-number", "x,y\n1,2\n3,four\n", CSVOptions{}, `line 3, column 2 ("y"): "four" is not a number`},
		{"empty value", "x,y\n1,\n", CSVOptions{}, `line 2, column 2 ("y"): empty value`},
		{"NaN", "x,y\nNaN,2\n", CSVOptions{}, `line 2, column 1 ("x"): "NaN" is not a finite number`},
		{"Inf", "x,y\n1,+Inf\n", CSVOptions{}, `line 2, column 2 ("y"): "+Inf" is not a finite number`},
		{"out of range", "x,y\n1e999,1\n", CSVOptions{}, `line 2, column 1 ("x"): "1e999" is out of range`},
		{"bad quote", "x,y\n1,\"2\n", CSVOptions{}, "line 2, character 6: extraneous or missing \" in quoted-field"},
		{"long header", wideNoXY, CSVOptions{}, "(header: a0,a1,a2,"},
		{"too many columns", wide, CSVOptions{}, fmt.Sprintf("line 1: the header has %d columns, more than the limit of %d columns", MaxColumns+1, MaxColumns)},
		{"too many rows", long.String(), CSVOptions{}, fmt.Sprintf("line %d: more data rows than the limit of %d rows (-max-rows raises it)", MaxRows+2, MaxRows)},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(c.in), "t.csv", c.opt)
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "csv t.csv: ") {
				t.Errorf("error %q, want prefix %q and %q", err, "csv t.csv: ", c.want)
			}
		})
	}
}

func TestLoadCSVErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("x,y\n1,oops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.csv"), "no such file"},
		{bad, "csv " + bad + ": line 2, column 2"}, // the full path names the file
	} {
		_, err := LoadCSV(c.path, CSVOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.HasPrefix(err.Error(), "dataset: ") {
			t.Errorf("LoadCSV(%s): err = %v, want %q", c.path, err, c.want)
		}
	}
}

func TestHeaderList(t *testing.T) {
	// 300 one-byte names joined by commas: 599 bytes, cut to 200 + "…".
	long := strings.Repeat("a,", 299) + "a"
	h := strings.Split(long, ",")
	if got := headerList(h); len(got) != 200+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("headerList of %d bytes = %d bytes %q", len(long), len(got), got)
	}
	// A multi-byte name straddling the cut is not split: "é" is 2 bytes.
	h = []string{strings.Repeat("a", 199) + "é"}
	if got := headerList(h); got != strings.Repeat("a", 199)+"…" {
		t.Errorf("headerList cut inside a rune: %q", got)
	}
	if got := headerList([]string{"x", "y"}); got != "x,y" {
		t.Errorf("headerList = %q, want x,y", got)
	}
}

// TestReadCSVConventions: truth…, label… and split columns and a file of
// outputs only, read by the conventions of CSVConventions.
func TestReadCSVConventions(t *testing.T) {
	const in = "t,x_time,y_a,y_b,truth_x,truth_y,label_room,label_speed,split,note\n" +
		"a,0,1,2,10,20,kitchen,0.5,train,ignored\n" +
		"b,1,3,4,11,21,hall,0.7,test,ignored\n" +
		"c,2,5,6,12,22,kitchen,0.9,train,ignored\n"
	ds, err := ReadCSV(strings.NewReader(in), "conv.csv", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Training rows (1 and 3) first, then the test row (2), in every
	// per-row column.
	if !mat.Equal(ds.X, mat.NewDense(2, 1, []float64{0, 2})) || !mat.Equal(ds.XTest, mat.NewDense(1, 1, []float64{1})) {
		t.Errorf("X %v, XTest %v", mat.Formatted(ds.X), mat.Formatted(ds.XTest))
	}
	if !mat.Equal(ds.Y, mat.NewDense(2, 2, []float64{1, 2, 5, 6})) || !mat.Equal(ds.YTest, mat.NewDense(1, 2, []float64{3, 4})) {
		t.Errorf("Y %v, YTest %v", mat.Formatted(ds.Y), mat.Formatted(ds.YTest))
	}
	if !mat.Equal(ds.Truth, mat.NewDense(3, 2, []float64{10, 20, 12, 22, 11, 21})) || strings.Join(ds.TruthNames, ",") != "truth_x,truth_y" {
		t.Errorf("truth %v %q", mat.Formatted(ds.Truth), ds.TruthNames)
	}
	if len(ds.Columns) != 2 {
		t.Fatalf("columns %+v, want label_room and label_speed", ds.Columns)
	}
	room, speed := ds.Columns[0], ds.Columns[1]
	if room.Name != "label_room" || strings.Join(room.Categories, ",") != "kitchen,hall" || fmt.Sprint(room.Values) != "[0 0 1]" {
		t.Errorf("label_room %+v: want categories kitchen, hall and rows kitchen, kitchen, hall", room)
	}
	if speed.Categories != nil || fmt.Sprint(speed.Values) != "[0.5 0.9 0.7]" {
		t.Errorf("label_speed %+v: want numbers 0.5, 0.9, 0.7", speed)
	}
	if ds.IsAutoencoder() {
		t.Error("a file with inputs is not an autoencoder")
	}

	// Outputs only: an autoencoder of images.
	ae, err := ReadCSV(strings.NewReader("y1,y2,y3,y4\n0,1,2,3\n4,5,6,7\n"), "img.csv", CSVOptions{Shape: [2]int{2, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if !ae.IsAutoencoder() || ae.Shape != [2]int{2, 2} || strings.Join(ae.InputNames, ",") != "y1,y2,y3,y4" {
		t.Errorf("outputs only: autoencoder %v, shape %v, inputs %q", ae.IsAutoencoder(), ae.Shape, ae.InputNames)
	}
}

func TestParseShape(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [2]int
		ok   bool
	}{
		{"28x20", [2]int{28, 20}, true},
		{" 28 × 20 ", [2]int{28, 20}, true},
		{"32X32", [2]int{32, 32}, true},
		{"28", [2]int{}, false},
		{"0x5", [2]int{}, false},
		{"5x-1", [2]int{}, false},
		{"a x b", [2]int{}, false},
		{"5000x1", [2]int{}, false}, // a side above 4096
	} {
		got, err := ParseShape(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseShape(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}

// TestWriteCSVRoundTrip: the robot fixture and the Frey fixture written
// as CSV and read back give the same values: training and test rows,
// ground truth, and an autoencoder stays one.
func TestWriteCSVRoundTrip(t *testing.T) {
	robot, err := LoadRobot(fixtureFile)
	if err != nil {
		t.Fatal(err)
	}
	robot.Columns = []Column{{Name: "room", Values: make([]float64, 60), Categories: []string{"lab"}}}
	frey, err := LoadFrey("testdata/frey_small.mat")
	if err != nil {
		t.Fatal(err)
	}
	for _, ds := range []*Dataset{robot, frey} {
		var buf bytes.Buffer
		if err := WriteCSV(&buf, ds); err != nil {
			t.Fatal(err)
		}
		back, err := ReadCSV(&buf, ds.Name, CSVOptions{})
		if err != nil {
			t.Fatalf("%s: %v", ds.Name, err)
		}
		same := func(a, b *mat.Dense) bool { return (a == nil) == (b == nil) && (a == nil || mat.Equal(a, b)) }
		if !same(ds.X, back.X) || !same(ds.Y, back.Y) || !same(ds.XTest, back.XTest) || !same(ds.YTest, back.YTest) || !same(ds.Truth, back.Truth) {
			t.Errorf("%s: the values differ after a round trip through CSV", ds.Name)
		}
		if ds.IsAutoencoder() != back.IsAutoencoder() || len(ds.Columns) != len(back.Columns) {
			t.Errorf("%s: autoencoder %v → %v, %d columns → %d", ds.Name, ds.IsAutoencoder(), back.IsAutoencoder(), len(ds.Columns), len(back.Columns))
		}
	}
}

// TestLoadCSVSizesItsArrays: a file read by path has its arrays sized
// once from its length: the bytes allocated while reading are less than
// twice the values' (growing by appending allocates 4 to 5 times them),
// and the values are those of the same file read as a stream.
func TestLoadCSVSizesItsArrays(t *testing.T) {
	const rows = 20000 // the scanner's 256 KiB buffer is small beside the 5 MB of values
	path := filepath.Join(t.TempDir(), "walk.csv")
	var b bytes.Buffer
	if err := WriteWalkCSV(&b, rows, 2); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ds, err := LoadCSV(path, CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	values := 8 * rows * (1 + WalkBeacons + 2)
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(2*values) && !raceEnabled {
		t.Errorf("reading %d bytes of values allocated %d bytes", values, got)
	}
	stream, err := ReadCSV(&b, "walk.csv", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(ds.Y, stream.Y) || !mat.Equal(ds.YTest, stream.YTest) || !mat.Equal(ds.Truth, stream.Truth) {
		t.Error("the file read by path and as a stream differ")
	}
}
