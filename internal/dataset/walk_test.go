package dataset

import (
	"bytes"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// walkCSV returns rows rows of the walk of seed as CSV.
func walkCSV(t testing.TB, rows int, seed uint64) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteWalkCSV(&b, rows, seed); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWalkDeterministic: the same seed gives the same bytes, another seed
// other bytes.
func TestWalkDeterministic(t *testing.T) {
	a, b, c := walkCSV(t, 300, 7), walkCSV(t, 300, 7), walkCSV(t, 300, 8)
	if !bytes.Equal(a, b) {
		t.Error("seed 7 gave two different files")
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 7 and 8 gave the same file")
	}
	// More rows survey the same walk more densely: row i of 100 is where
	// row 3i of 300 is, at the same time.
	w100, w300 := NewWalk(7, 100), NewWalk(7, 300)
	for i := range 100 {
		r := w100.Next()
		s := w300.Next()
		if i > 0 && r.Time == 0 {
			t.Fatalf("row %d: time 0", i+1)
		}
		if r.Time != s.Time || r.X != s.X || r.Y != s.Y || r.Clean != s.Clean {
			t.Fatalf("row %d of 100 at %v s (%v, %v), row %d of 300 at %v s (%v, %v)", i+1, r.Time, r.X, r.Y, 3*i+1, s.Time, s.X, s.Y)
		}
		w300.Next()
		w300.Next()
	}
}

// TestWalkFileReadsAsRobotShape: the file reads by the CSV conventions as
// one input (time, s), 30 outputs (dBm), the true position and every
// 10th row held out; its values are the generator's to the 3 decimals
// written, and the noise about the generator's noise-free signal has the
// standard deviation WalkNoiseDBm.
func TestWalkFileReadsAsRobotShape(t *testing.T) {
	const rows = 2000
	ds, err := ReadCSV(bytes.NewReader(walkCSV(t, rows, 1)), "walk.csv", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nTrain, nTest := ds.Rows()
	if nTrain != rows-rows/WalkTestEvery || nTest != rows/WalkTestEvery {
		t.Fatalf("%d train / %d test rows, want %d / %d", nTrain, nTest, rows-rows/WalkTestEvery, rows/WalkTestEvery)
	}
	if strings.Join(ds.InputNames, ",") != "x_time" || len(ds.OutputNames) != WalkBeacons || ds.OutputNames[29] != "y_ap30" ||
		strings.Join(ds.TruthNames, ",") != "truth_x,truth_y" {
		t.Errorf("columns: inputs %q, outputs %q, truth %q", ds.InputNames, ds.OutputNames, ds.TruthNames)
	}
	w := NewWalk(1, rows)
	var sum, sum2 float64
	train, test := 0, 0
	for i := range rows {
		r := w.Next()
		if r.Test != (i%WalkTestEvery == WalkTestEvery-1) {
			t.Fatalf("row %d: Test %v", i+1, r.Test)
		}
		x, y, row := ds.X, ds.Y, train // training rows first, then test rows, each in file order
		if r.Test {
			x, y, row = ds.XTest, ds.YTest, test
			test++
		} else {
			train++
		}
		if x.At(row, 0) != r.Time {
			t.Fatalf("row %d (%s row %d): time %v, want %v", i+1, map[bool]string{false: "train", true: "test"}[r.Test], row+1, x.At(row, 0), r.Time)
		}
		for k := range WalkBeacons {
			v := y.At(row, k)
			if math.Abs(v-r.Signal[k]) > 0.0005+1e-9 {
				t.Fatalf("row %d, beacon %d: %v in the file, %v generated", i+1, k+1, v, r.Signal[k])
			}
			e := v - r.Clean[k]
			sum += e
			sum2 += e * e
		}
	}
	const wantSD = 2.0 // dBm, as the walk is specified
	n := float64(rows * WalkBeacons)
	mean := sum / n
	sd := math.Sqrt(sum2/n - mean*mean)
	// Standard errors: of the mean 2/√n = 0.0082, of the sd 2/√(2n) = 0.0058.
	if math.Abs(mean) > 5*wantSD/math.Sqrt(n) || math.Abs(sd-wantSD) > 5*wantSD/math.Sqrt(2*n) {
		t.Errorf("noise about the noise-free signal: mean %.4f, sd %.4f dBm; want 0 and %v", mean, sd, wantSD)
	}
}

// TestWalkStreams: writing a walk allocates the same, a few buffers,
// however many rows it has.
func TestWalkStreams(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector counts allocations of its own (and varies them)")
	}
	short := testing.AllocsPerRun(3, func() { WriteWalkCSV(io.Discard, 10, 1) })
	long := testing.AllocsPerRun(3, func() { WriteWalkCSV(io.Discard, 20000, 1) })
	if long > short+2 {
		t.Errorf("10 rows: %v allocations, 20,000 rows: %v", short, long)
	}
}

// BenchmarkWalkCSV writes walk rows as CSV.
func BenchmarkWalkCSV(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteWalkCSV(io.Discard, 10000, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLoadLargeFile loads the file $DGPVIZ_LOAD_FILE (any format Load
// reads; e.g. a million-row walk from `viz data walk`) and logs its rows
// and the time taken: run under /usr/bin/time -v for the peak RSS
// (docs/measurements.md, "Loading").
func TestLoadLargeFile(t *testing.T) {
	path := os.Getenv("DGPVIZ_LOAD_FILE")
	if path == "" {
		t.Skip("set DGPVIZ_LOAD_FILE to a data file to measure its loading")
	}
	start, cpu := time.Now(), cpuSeconds()
	ds, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	train, test := ds.Rows()
	_, d := ds.Y.Dims()
	t.Logf("%s: %d + %d rows × %d outputs in %.2f s (%.2f CPU s)", path, train, test, d, time.Since(start).Seconds(), cpuSeconds()-cpu)
}
