package fitfigure

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"

	"gonum.org/v1/plot/cmpimg"
)

// TestNormalization checks that the fit figure undoes the normalisation.
func TestNormalization(t *testing.T) {
	m := engine.StepModel(8)
	raw, err := FitFigure(m, dataset.Normalizer{}, dataset.Normalizer{}, 50)
	if err != nil {
		t.Fatal(err)
	}
	fit, err := FitFigure(m, dataset.Normalizer{Mean: []float64{10}, Scale: []float64{2}}, dataset.Normalizer{Mean: []float64{-1}, Scale: []float64{3}}, 50)
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw.X {
		if fit.X[i] != raw.X[i]*2+10 || fit.Y[i] != raw.Y[i]*3-1 {
			t.Fatalf("datum %d: (%v, %v) from (%v, %v)", i, fit.X[i], fit.Y[i], raw.X[i], raw.Y[i])
		}
	}
	for i := range raw.Grid.X {
		// 1e-12: one multiply-add.
		if math.Abs(fit.Grid.Mean[i]-(raw.Grid.Mean[i]*3-1)) > 1e-12 || math.Abs(fit.Grid.SD[i]-raw.Grid.SD[i]*3) > 1e-12 {
			t.Fatalf("grid %d: mean %v sd %v from %v %v", i, fit.Grid.Mean[i], fit.Grid.SD[i], raw.Grid.Mean[i], raw.Grid.SD[i])
		}
	}
}

// TestBadFitRequests: every bad request is an error naming the problem,
// prefixed with the package name.
func TestBadFitRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"fit multi-D", func() error {
			_, err := FitFigure(engine.RandomModel(rand.New(rand.NewPCG(1, 1)), 4, []int{2, 1}, []string{"rbf"}, 4), dataset.Normalizer{}, dataset.Normalizer{}, 0)
			return err
		}, "1-D"},
		{"normalization columns", func() error {
			_, err := FitFigure(engine.StepModel(8), dataset.Normalizer{Mean: []float64{0, 0}, Scale: []float64{1, 1}}, dataset.Normalizer{Mean: []float64{0}, Scale: []float64{1}}, 0)
			return err
		}, "one column"},
		{"grid points", func() error {
			_, err := FitFigure(engine.StepModel(8), dataset.Normalizer{}, dataset.Normalizer{}, 1)
			return err
		}, "grid points"},
		{"nil model", func() error { _, err := FitFigure(nil, dataset.Normalizer{}, dataset.Normalizer{}, 0); return err }, "nil model"},
		{"no fits", func() error { return RenderFit(new(bytes.Buffer), "png", nil) }, "at least one"},
		{"format", func() error {
			f, _ := FitFigure(engine.StepModel(8), dataset.Normalizer{}, dataset.Normalizer{}, 0)
			return RenderFit(new(bytes.Buffer), "gif", []*FitData{f})
		}, "format"},
	} {
		err := tc.run()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.HasPrefix(err.Error(), "fitfigure: ") {
			t.Errorf("%s: error %v, want one without a package prefix mentioning %q", tc.name, err, tc.want)
		}
	}
}

// TestRenderGolden renders the fit figure of a 1- and a 2-layer model on
// the step data and compares it with a golden PNG (cmpimg.EqualApprox's
// tolerance 0.05 lets rasterisation differences between platforms pass;
// go test -regen rewrites it).
func TestRenderGolden(t *testing.T) {
	m := engine.StepModel(12)
	two := engine.RandomModel(rand.New(rand.NewPCG(2, 2)), 40, []int{1, 1, 1}, []string{"rbf", "rbf"}, 8)
	two.X, two.Y = m.X, m.Y
	var fits []*FitData
	for _, mm := range []*engine.Model{m, two} {
		f, err := FitFigure(mm, dataset.Normalizer{}, dataset.Normalizer{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		fits = append(fits, f)
	}
	var buf bytes.Buffer
	if err := RenderFit(&buf, "png", fits); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "fit_golden.png")
	if *cmpimg.GenerateTestData {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -regen to create it)", err)
	}
	ok, err := cmpimg.EqualApprox("png", buf.Bytes(), want, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		bad := filepath.Join(t.TempDir(), "fit_golden.png")
		os.WriteFile(bad, buf.Bytes(), 0o644)
		t.Errorf("the fit figure differs from the golden image; got written to %s", bad)
	}
}

// TestAxisLabels: the axes carry the data's names (x and y when unknown)
// and their units when the data name them, bare when they do not.
func TestAxisLabels(t *testing.T) {
	f, err := FitFigure(engine.StepModel(8), dataset.Normalizer{}, dataset.Normalizer{}, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		xName, yName, xUnit, yUnit string
		want                       []string
	}{
		{"", "", "", "", []string{">x<", ">y (mean ± 2 sd)<"}},
		{"x_time", "y_ap1", "", "", []string{">x_time<", ">y_ap1 (mean ± 2 sd)<"}},
		{"", "", "s", "dBm", []string{">x (s)<", ">y (mean ± 2 sd) (dBm)<"}},
		{"x_time", "y_ap1", "s", "dBm", []string{">x_time (s)<", ">y_ap1 (mean ± 2 sd) (dBm)<"}},
	} {
		f.XName, f.YName, f.XUnit, f.YUnit = c.xName, c.yName, c.xUnit, c.yUnit
		var buf bytes.Buffer
		if err := RenderFit(&buf, "svg", []*FitData{f}); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("names %q, %q, units %q, %q: the figure has no label %s", c.xName, c.yName, c.xUnit, c.yUnit, w)
			}
		}
	}
}
