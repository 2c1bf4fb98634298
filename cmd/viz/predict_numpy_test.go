package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/modelfile"

	"gonum.org/v1/gonum/mat"
)

// numpyPython returns a Python 3 that imports numpy: $PYTHON, python3 on
// the PATH or Debian's /usr/bin/python3. Without one the test is skipped,
// or fails when CI is set (CI installs Debian's python3-numpy).
func numpyPython(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, py := range []string{os.Getenv("PYTHON"), "python3", "/usr/bin/python3"} {
		if py == "" {
			continue
		}
		path, err := exec.LookPath(py)
		if err != nil {
			tried = append(tried, py+": not found")
			continue
		}
		if err := exec.Command(path, "-c", "import numpy").Run(); err != nil {
			tried = append(tried, path+": no numpy")
			continue
		}
		return path
	}
	msg := fmt.Sprintf("no python3 with numpy (%s): on Debian, apt-get install python3-numpy", strings.Join(tried, "; "))
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg + ": skipping")
	return ""
}

// TestPredictNumpy: scripts/predict.py, numpy alone and docs/model-format.md's
// formulas, predicts every layer's message as viz predict does, to 1e-8
// of each output's scale, and names the same columns and units: on fitted
// step models (arrays as JSON numbers, no units named), on a
// multi-dimensional model with every kernel and compact arrays (integer
// data in original units, float64 data, q_sqrt's triangles) and units
// of its own ("m/s" inputs, "dBm" outputs), and on a Frey faces model
// (autoencoder: data.Y the same as data.X, in grey levels).
func TestPredictNumpy(t *testing.T) {
	py := numpyPython(t)
	dir := t.TempDir()
	var grid []string
	for i := range 41 {
		grid = append(grid, fmt.Sprint(-0.5+0.05*float64(i))) // beyond the data's 0…1 on both sides
	}
	stepInputs := writeFile(t, "step.csv", "x\n"+strings.Join(grid, "\n")+"\n")

	multi, multiInputs := multiModel(t, dir)

	freyModel := filepath.Join(dir, "frey.json")
	fixture := "../../internal/dataset/testdata/frey_small.mat"
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"fit", "-data", "frey:" + fixture, "-hidden", "2", "-inducing", "8", "-iters", "10", "-quiet", "-out", freyModel}, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("fitting the Frey fixture: %v (%s)", err, stderr.String())
	}
	ds, err := dataset.LoadFrey(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var frames strings.Builder
	for i := range 3 {
		frames.WriteString(strings.Trim(strings.Join(strings.Fields(fmt.Sprint(mat.Row(nil, i, ds.X))), ","), "[]") + "\n")
	}
	freyInputs := writeFile(t, "frames.csv", frames.String())

	for _, tc := range []struct{ name, model, inputs string }{
		{"fitted step, 3 layers", "../../internal/engine/testdata/step3_fitted.json", stepInputs},
		{"fitted step, 2 layers", "../../internal/engine/testdata/step2_fitted.json", stepInputs},
		{"multi-dimensional, compact", multi, multiInputs},
		{"Frey faces", freyModel, freyInputs},
		{"Frey faces at the training inputs", freyModel, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"predict", "-model", tc.model}
			pyArgs := []string{"../../scripts/predict.py", tc.model}
			if tc.inputs != "" {
				args = append(args, "-in", tc.inputs)
				pyArgs = append(pyArgs, tc.inputs)
			}
			var gout, gerr bytes.Buffer
			if err := run(context.Background(), args, &gout, &gerr); err != nil {
				t.Fatalf("viz predict: %v (%s)", err, gerr.String())
			}
			cmd := exec.Command(py, pyArgs...)
			var pout, perr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &pout, &perr
			if err := cmd.Run(); err != nil {
				t.Fatalf("predict.py: %v\n%s", err, perr.String())
			}
			var want, got predictJSON
			if err := json.Unmarshal(gout.Bytes(), &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(pout.Bytes(), &got); err != nil {
				t.Fatalf("predict.py's output: %v", err)
			}
			// At the training inputs viz predict undoes the normalisation
			// (value·scale + mean); predict.py reads integer data's
			// original units as stored: an ulp apart.
			compareRows(t, "x", want.X, got.X)
			if len(got.Layers) != len(want.Layers) {
				t.Fatalf("%d layers, want %d", len(got.Layers), len(want.Layers))
			}
			if got.Units != want.Units {
				t.Errorf("x's unit %q, viz predict's %q", got.Units.X, want.Units.X)
			}
			if !slices.Equal(got.XColumns, want.XColumns) {
				t.Errorf("x columns %q, viz predict's %q", got.XColumns, want.XColumns)
			}
			for i := range want.Layers {
				if !slices.Equal(got.Layers[i].Columns, want.Layers[i].Columns) {
					t.Errorf("layer %d's columns %q, viz predict's %q", i+1, got.Layers[i].Columns, want.Layers[i].Columns)
				}
				if got.Layers[i].Units != want.Layers[i].Units {
					t.Errorf("layer %d's units %+v, viz predict's %+v", i+1, got.Layers[i].Units, want.Layers[i].Units)
				}
			}
			worst := 0.0
			for i := range want.Layers {
				worst = max(worst,
					compareRows(t, fmt.Sprintf("layer %d mean", i+1), want.Layers[i].Mean, got.Layers[i].Mean),
					compareRows(t, fmt.Sprintf("layer %d var", i+1), want.Layers[i].Var, got.Layers[i].Var))
			}
			t.Logf("largest difference: %.3g of the output's scale", worst)
		})
	}
}

// compareRows fails where got differs from want by more than 1e-8 of
// |want| + the column's largest |want|, and returns the largest such
// relative difference.
func compareRows(t *testing.T, what string, want, got [][]float64) float64 {
	t.Helper()
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	scale := make([]float64, len(want[0]))
	for _, row := range want {
		for j, v := range row {
			scale[j] = max(scale[j], math.Abs(v))
		}
	}
	worst := 0.0
	for i, row := range want {
		if len(got[i]) != len(row) {
			t.Fatalf("%s row %d: %d values, want %d", what, i+1, len(got[i]), len(row))
		}
		for j, v := range row {
			d := math.Abs(got[i][j]-v) / (math.Abs(v) + scale[j] + math.SmallestNonzeroFloat64)
			if d > 1e-8 {
				t.Errorf("%s row %d column %d: %v, viz predict %v", what, i+1, j+1, got[i][j], v)
			}
			worst = max(worst, d)
		}
	}
	return worst
}

// multiModel writes a model 3 → 2 → 2 → 4 with rbf, linear and rbfiso
// layers whose integer inputs and float outputs are normalised (a
// normalisation to undo), with more than 1024 values in data.X, data.Y
// and the last layer's q_sqrt (compact arrays), and a CSV of inputs.
func multiModel(t *testing.T, dir string) (model, inputs string) {
	rng := rand.New(rand.NewPCG(7, 8))
	m := engine.RandomModel(rng, 400, []int{3, 2, 2, 4}, []string{"rbf", "linear", "rbfiso"}, 25)
	raw := mat.NewDense(400, 3, nil)
	for i := range 400 {
		for j := range 3 {
			raw.Set(i, j, float64(rng.IntN(200)))
		}
	}
	nx := dataset.FitNormalizer(raw)
	m.X = nx.Apply(raw)
	ny := dataset.Normalizer{Mean: []float64{3, -1, 0, 100}, Scale: []float64{10, 0.5, 1, 7}}
	var buf bytes.Buffer
	mf := &modelfile.File{Model: m, Info: modelfile.DataInfo{XUnit: "m/s", YUnit: "dBm"},
		Extra: map[string]json.RawMessage{"normalization": modelfile.NormalizationJSON(nx, ny)}}
	if err := modelfile.Write(&buf, mf); err != nil {
		t.Fatal(err)
	}
	model = filepath.Join(dir, "multi.json")
	if err := os.WriteFile(model, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	for _, want := range []string{`"dtype": "uint8"`, `"dtype": "float64"`, `"triangle": "lower"`, `"x_unit": "m/s"`, `"y_unit": "dBm"`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("the fixture has no %s: not the compact form it should test", want)
		}
	}
	var rows strings.Builder
	for range 30 {
		fmt.Fprintf(&rows, "%g,%g,%g\n", rng.Float64()*250-60, rng.Float64()*250-60, rng.Float64()*250-60)
	}
	return model, writeFile(t, "multi.csv", rows.String())
}
