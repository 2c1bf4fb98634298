package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
)

// TestPredict checks viz predict's shapes and units on a quick step fit:
// with no inputs it predicts at the training inputs in their original
// units and order, -x and -in agree, and CSV matches JSON.
func TestPredict(t *testing.T) {
	dir := t.TempDir()
	fitStep(t, dir, "m.json")
	model := filepath.Join(dir, "m.json")
	predict := func(args ...string) []byte {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), append([]string{"predict", "-model", model}, args...), &stdout, &stderr); err != nil {
			t.Fatalf("viz predict %v: %v\n%s", args, err, stderr.String())
		}
		return stdout.Bytes()
	}
	var own predictJSON
	if err := json.Unmarshal(predict(), &own); err != nil {
		t.Fatal(err)
	}
	step := dataset.Step()
	n, _ := step.X.Dims()
	if len(own.X) != n || len(own.Layers) != 2 {
		t.Fatalf("%d inputs, %d layers; want %d, 2", len(own.X), len(own.Layers), n)
	}
	var sq float64
	for i := range n {
		// Normalising and un-normalising x costs a few ulps.
		if math.Abs(own.X[i][0]-step.X.At(i, 0)) > 1e-12 {
			t.Errorf("x[%d] = %v, want the training input %v", i, own.X[i][0], step.X.At(i, 0))
		}
		for _, l := range own.Layers {
			if len(l.Mean[i]) != 1 || len(l.Var[i]) != 1 || !(l.Var[i][0] > 0) {
				t.Fatalf("row %d: mean %v var %v", i, l.Mean[i], l.Var[i])
			}
		}
		r := own.Layers[1].Mean[i][0] - step.Y.At(i, 0)
		sq += r * r
	}
	// In original units the step is 0/1; a fit (even a quick one) must be
	// within 0.15 RMS, while normalised outputs (±1) would be ~0.5 off.
	if rms := math.Sqrt(sq / float64(n)); rms > 0.15 {
		t.Errorf("RMS error of the predictive mean %.3f at the training inputs: not in original units?", rms)
	}

	var viaX predictJSON
	if err := json.Unmarshal(predict("-x", "0, 0.5,1"), &viaX); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("x\n0\n0.5\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var viaIn predictJSON
	if err := json.Unmarshal(predict("-in", in), &viaIn); err != nil {
		t.Fatal(err)
	}
	if len(viaX.X) != 3 || viaX.Layers[1].Mean[2][0] != viaIn.Layers[1].Mean[2][0] || viaX.Layers[0].Var[1][0] != viaIn.Layers[0].Var[1][0] {
		t.Errorf("-x and -in differ: %+v vs %+v", viaX, viaIn)
	}
	if own.Units.X != "original units" || own.Layers[0].Units != (messageUnitsJSON{"latent", "latent"}) || own.Layers[1].Units != (messageUnitsJSON{"original units", "(original units)²"}) || own.Layers[1].Layer != 2 {
		t.Errorf("units %+v, layers %+v %+v", own.Units, own.Layers[0].Units, own.Layers[1].Units)
	}
	if viaX.Layers[1].Mean[0][0] != own.Layers[1].Mean[0][0] {
		t.Errorf("prediction at x = 0: %v via -x, %v at the training input", viaX.Layers[1].Mean[0][0], own.Layers[1].Mean[0][0])
	}

	recs, err := csv.NewReader(bytes.NewReader(predict("-x", "0,0.5,1", "-format", "csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// The step data name no units: the headers say the data's own; the
	// columns are the data's (x, y), a hidden layer's by layer and
	// dimension.
	if got := strings.Join(recs[0], ","); got != "x [original units],layer1_dim1_mean [latent],layer1_dim1_var [latent],y_mean [original units],y_var [(original units)²]" || len(recs) != 4 {
		t.Fatalf("CSV header %q, %d rows", got, len(recs))
	}
	if !slices.Equal(own.XColumns, []string{"x"}) || !slices.Equal(own.Layers[0].Columns, []string{"layer1_dim1"}) || !slices.Equal(own.Layers[1].Columns, []string{"y"}) {
		t.Errorf("JSON columns %q, %q, %q; want x, layer1_dim1, y", own.XColumns, own.Layers[0].Columns, own.Layers[1].Columns)
	}
	if recs[3][3] != jsonNum(viaX.Layers[1].Mean[2][0]) {
		t.Errorf("CSV mean %s, JSON %v", recs[3][3], viaX.Layers[1].Mean[2][0])
	}
}

func jsonNum(v float64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestPredictBadInput checks that bad flags and inputs are usage errors.
func TestPredictBadInput(t *testing.T) {
	dir := t.TempDir()
	fitStep(t, dir, "m.json", "-restarts", "1", "-iters", "5")
	model := filepath.Join(dir, "m.json")
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("x\n0\nzero\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wide := filepath.Join(dir, "wide.csv")
	if err := os.WriteFile(wide, []byte("0,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{},
		{"-model", filepath.Join(dir, "missing.json")},
		{"-model", model, "-x", "0,a"},
		{"-model", model, "-x", "NaN"},
		{"-model", model, "-format", "xml"},
		{"-model", model, "-in", bad},
		{"-model", model, "-in", wide},
		{"-model", model, "-x", "0", "-in", bad},
	} {
		err := run(context.Background(), append([]string{"predict"}, args...), &bytes.Buffer{}, &bytes.Buffer{})
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("viz predict %v: error %v, want a usage error", args, err)
		}
	}
}
