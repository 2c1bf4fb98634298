package streamtest

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/dataset"

	"gonum.org/v1/gonum/mat"
)

// Data for session tests, the same from every package's tests.

// Root returns the module's root folder (where go.mod is), found from the
// test's working folder, so that tests of any package name the same files.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = up
	}
}

// RobotData returns the real robot data when present (../shared beside
// the checkout, or $DGPVIZ_ROBOT), else the 60-scan fixture of the dataset
// package (which has true positions too). The fast tier (-short) takes
// the fixture: the protocol is the same, the fits a fraction of the time.
func RobotData(t testing.TB) *dataset.Dataset {
	t.Helper()
	root := Root(t)
	real := filepath.Join(root, "..", "shared", "data", "robot_wireless", "uw-floor.txt")
	if testing.Short() {
		real = ""
	}
	for _, p := range []string{os.Getenv("DGPVIZ_ROBOT"), real, filepath.Join(root, "internal", "dataset", "testdata", "robot_small.txt")} {
		if p == "" {
			continue
		}
		if ds, err := dataset.LoadRobot(p); err == nil {
			t.Logf("robot data: %s", p)
			return ds
		}
	}
	t.Fatal("no robot data: not even the fixture")
	return nil
}

// RobotWait is how long the robot tests wait for a setup, a first frame
// or a data-set switch's reply: the preset's restart selection on the real
// data runs before either, for tens of seconds under -race on a busy
// 2-core machine.
const RobotWait = 90 * time.Second

// WideData is robot-shaped synthetic data ("wide"): n scans in time, d
// smooth signals.
func WideData(n, d int) *dataset.Dataset {
	x := mat.NewDense(n, 1, nil)
	y := mat.NewDense(n, d, nil)
	names := make([]string, d)
	for j := range d {
		names[j] = fmt.Sprintf("ap%d", j)
	}
	for i := range n {
		t := float64(i)
		x.Set(i, 0, t)
		for j := range d {
			y.Set(i, j, math.Sin(t/20+float64(j))+0.1*math.Cos(t*float64(j+1)))
		}
	}
	return &dataset.Dataset{Name: "wide", Description: "synthetic robot-shaped data", X: x, Y: y, InputNames: []string{"time"}, OutputNames: names}
}

// BlobImages returns n images of h × w pixels of a bright blob moving
// across a dark field, as an autoencoder's data (outputs only).
func BlobImages(n, h, w int) *dataset.Dataset {
	y := mat.NewDense(n, h*w, nil)
	for i := range n {
		a := 2 * math.Pi * float64(i) / float64(n)
		cy, cx := float64(h-1)/2+float64(h)/4*math.Sin(a), float64(w-1)/2+float64(w)/4*math.Cos(a)
		for r := range h {
			for c := range w {
				d2 := (float64(r)-cy)*(float64(r)-cy) + (float64(c)-cx)*(float64(c)-cx)
				y.Set(i, r*w+c, math.Round(255*math.Exp(-d2/4)))
			}
		}
	}
	names := make([]string, h*w)
	for k := range names {
		names[k] = fmt.Sprintf("p%d", k+1)
	}
	return &dataset.Dataset{Name: "blobs", X: mat.DenseCopyOf(y), Y: y, InputNames: names, OutputNames: names}
}

// ViaCSV is ds written as a CSV (dataset.WriteCSV) and read back as an
// upload is read.
func ViaCSV(t testing.TB, ds *dataset.Dataset, opt dataset.CSVOptions) *dataset.Dataset {
	t.Helper()
	var buf strings.Builder
	if err := dataset.WriteCSV(&buf, ds); err != nil {
		t.Fatal(err)
	}
	back, err := dataset.ReadCSV(strings.NewReader(buf.String()), "upload.csv", opt)
	if err != nil {
		t.Fatal(err)
	}
	return back
}
