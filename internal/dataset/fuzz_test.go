package dataset

import (
	"bytes"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// checkParsed fails unless a parsed data set is consistent: matching
// rows, finite values, names for every column.
func checkParsed(t *testing.T, ds *Dataset) {
	t.Helper()
	n, q := ds.X.Dims()
	ny, d := ds.Y.Dims()
	if n != ny || n < 1 || len(ds.InputNames) != q || len(ds.OutputNames) != d {
		t.Fatalf("inconsistent data set: X %d×%d, Y %d×%d, names %d/%d", n, q, ny, d, len(ds.InputNames), len(ds.OutputNames))
	}
	// Units as SplitUnit gives them, names without them.
	for _, u := range []string{ds.InputUnit, ds.OutputUnit, ds.TruthUnit} {
		if len(u) > MaxUnitBytes || strings.ContainsAny(u, "[]") {
			t.Fatalf("unit %q", u)
		}
	}
	for _, name := range slices.Concat(ds.InputNames, ds.OutputNames, ds.TruthNames) {
		if strings.ContainsAny(name, "[]") {
			t.Fatalf("name %q holds its unit", name)
		}
	}
	// The values, and what the model sees: standardised columns.
	for _, a := range []*mat.Dense{ds.X, ds.Y, FitNormalizer(ds.X).Apply(ds.X), FitNormalizer(ds.Y).Apply(ds.Y)} {
		for _, v := range a.RawMatrix().Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("a parsed or standardised value is %v", v)
			}
		}
	}
}

// FuzzReadCSV: any input gives a consistent data set or an error, never a
// panic.
func FuzzReadCSV(f *testing.F) {
	if b, err := os.ReadFile("testdata/good.csv"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{"x,y\n1,2\n", "x,y\n1,NaN\n", "x,y,y2\n1,2\n", "\"x\ny\",y\n1,2\n", "x,y\n1e308,1e308\n-1e308,2\n", "y,x\n1,2\n2,3\n", "x,y,label,split\n1,2,\"a\nb\",test\n3,4,\"a\"\"\",TRAIN\n", "x,y\r\n 1 , 2\r\n\r\n", "x [s],y1 [dBm],y2 [dBm],truth_x [m]\n1,2,3,4\n", "x [s],y [dBm\n1,2\n", "y1 [a],y2 [b]\n1,2\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := ReadCSV(bytes.NewReader(b), "fuzz", CSVOptions{})
		if err != nil {
			return
		}
		checkParsed(t, ds)
	})
}

// FuzzReadRobot: the robot WiFi format, likewise.
func FuzzReadRobot(f *testing.F) {
	if b, err := os.ReadFile("testdata/robot_small.txt"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("1 2 3 aa:bb -50\n"))
	f.Add([]byte("0.5 1 1 x -40 y -70\n1.0 2 2 x -41\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := ReadRobot(bytes.NewReader(b))
		if err != nil {
			return
		}
		checkParsed(t, ds)
	})
}
