package dataset

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestFreyFixtureUpToDate checks that testdata/frey_small.mat is what
// writeMAT writes for freyFixtureData; -update (shared with the robot
// fixture) rewrites it.
func TestFreyFixtureUpToDate(t *testing.T) {
	want := writeMAT(matVar{name: FreyVariable, class: 9, typ: miUINT8, rows: FreyPixels, cols: freyFixtureFrames, data: freyFixtureData()})
	if *update {
		if err := os.WriteFile(freyFixtureFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(freyFixtureFile)
	if err != nil {
		t.Fatalf("%v (run go test -run TestFreyFixtureUpToDate -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the generator (run with -update)", freyFixtureFile)
	}
}

func TestLoadFreyFixture(t *testing.T) {
	ds, err := Load("frey:" + freyFixtureFile)
	if err != nil {
		t.Fatal(err)
	}
	data := freyFixtureData()
	n, d := ds.X.Dims()
	if n != freyFixtureFrames || d != FreyPixels || ds.Name != "frey" {
		t.Fatalf("%s: %d×%d", ds.Name, n, d)
	}
	// Frame f, pixel k is column f, row k of ff: data[f*560+k].
	for _, f := range []int{0, 1, 37, n - 1} {
		for _, k := range []int{0, 21, 300, FreyPixels - 1} {
			if ds.X.At(f, k) != data[f*FreyPixels+k] || ds.Y.At(f, k) != ds.X.At(f, k) {
				t.Errorf("frame %d pixel %d: X %v Y %v, want %v", f, k, ds.X.At(f, k), ds.Y.At(f, k), data[f*FreyPixels+k])
			}
		}
	}
	// X and Y must not share storage: normalising one must not touch the other.
	ds.X.Set(0, 0, -1)
	if ds.Y.At(0, 0) == -1 {
		t.Error("X and Y share storage")
	}
	if ds.InputNames[21] != "r1c1" || len(ds.OutputNames) != FreyPixels || ds.XTest != nil {
		t.Errorf("names %q, test set %v", ds.InputNames[21], ds.XTest)
	}
}

func TestReadFreyErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"no ff", writeMAT(matVar{name: "x", class: 9, typ: miUINT8, rows: FreyPixels, cols: 2, data: make([]float64, 2*FreyPixels)}), `no variable "ff"`},
		{"wrong size", writeMAT(matVar{name: "ff", class: 9, typ: miUINT8, rows: 10, cols: 2, data: make([]float64, 20)}), "want 560 rows"},
		{"one frame", writeMAT(matVar{name: "ff", class: 9, typ: miUINT8, rows: FreyPixels, cols: 1, data: make([]float64, FreyPixels)}), "at least 2"},
		{"out of range", writeMAT(matVar{name: "ff", class: 6, typ: miDOUBLE, rows: FreyPixels, cols: 2, data: append(make([]float64, 2*FreyPixels-1), 300)}), "frame 2 pixel 560 is 300"},
		{"not a MAT-file", []byte("hello"), "MAT-file"},
	} {
		_, err := ReadFrey(bytes.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.HasPrefix(err.Error(), "dataset: ") {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

// TestLoadFreyReal reads the paper's frey_rawface.mat: 1965 frames of 560
// pixels, grey levels 8–238 (its README in shared/data/frey_faces).
func TestLoadFreyReal(t *testing.T) {
	path := sharedFile(t, "frey_faces", "frey_rawface.mat")
	ds, err := LoadFrey(path)
	if err != nil {
		t.Fatal(err)
	}
	n, d := ds.Y.Dims()
	if n != 1965 || d != 560 {
		t.Fatalf("%d×%d, want 1965×560", n, d)
	}
	lo, hi := 255.0, 0.0
	for i := range n {
		for j := range d {
			lo, hi = min(lo, ds.Y.At(i, j)), max(hi, ds.Y.At(i, j))
		}
	}
	if lo != 8 || hi != 238 {
		t.Errorf("grey levels %v–%v, want 8–238", lo, hi)
	}
}
