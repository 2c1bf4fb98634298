package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dgpviz/internal/engine"
	"dgpviz/internal/modelfile"

	"gonum.org/v1/gonum/mat"
)

// mcModel returns a model with 1-D data on [−1, 1], a step target and the
// given number of RBF layers with widths 1-2-…-2-1 (a single layer is
// 1-1), each with m inducing points spread evenly over [−1.5, 1.5].
func mcModel(layers, m int) *engine.Model {
	const n = 20
	x := mat.NewDense(n, 1, nil)
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		v := -1 + 2*float64(i)/(n-1)
		x.Set(i, 0, v)
		if v > 0 {
			y.Set(i, 0, 1)
		}
	}
	model := &engine.Model{Jitter: 1e-6, X: x, Y: y}
	for l := 0; l < layers; l++ {
		q, d := 2, 2
		if l == 0 {
			q = 1
		}
		if l == layers-1 {
			d = 1
		}
		z := mat.NewDense(m, q, nil)
		qmu := mat.NewDense(m, d, nil)
		for i := 0; i < m; i++ {
			v := -1.5 + 3*float64(i)/float64(m-1)
			for c := 0; c < q; c++ {
				z.Set(i, c, v*(1+0.1*float64(c)))
			}
			for c := 0; c < d; c++ {
				qmu.Set(i, c, math.Tanh(4*v)+0.2*float64(c))
			}
		}
		var qs []*mat.Dense
		for c := 0; c < d; c++ {
			s := mat.NewDense(m, m, nil)
			for i := 0; i < m; i++ {
				s.Set(i, i, 0.1)
			}
			qs = append(qs, s)
		}
		ls := make([]float64, q)
		for c := range ls {
			ls[c] = 0.5
		}
		model.Layers = append(model.Layers, &engine.Layer{Kernel: engine.NewRBF(1, ls), NoiseVariance: 0.01, InducingInputs: z, QMu: qmu, QSqrt: qs})
	}
	return model
}

func writeMCModel(t *testing.T, m *engine.Model, extra map[string]json.RawMessage) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.json")
	var buf bytes.Buffer
	if err := modelfile.WriteModel(&buf, m, extra); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type mcOut struct {
	Mean, Var, MeanSE, VarSE [][]float64
}

func (o *mcOut) UnmarshalJSON(b []byte) error {
	var v struct {
		Mean   [][]float64 `json:"mean"`
		Var    [][]float64 `json:"var"`
		MeanSE [][]float64 `json:"mean_se"`
		VarSE  [][]float64 `json:"var_se"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*o = mcOut{v.Mean, v.Var, v.MeanSE, v.VarSE}
	return nil
}

// TestMC checks `viz mc` for each layer of a 2-layer model against the
// exact identity: the true response's mean is the message mean, its
// variance var + 2σ²(compression/D + propagation_d). Layer 2 has D = 1,
// so the engine's per-datum terms suffice; for layer 1 (D = 2, certain
// inputs) there is no propagation term and the compression splits evenly.
func TestMC(t *testing.T) {
	m := mcModel(2, 8)
	path := writeMCModel(t, m, nil)
	res, _, err := engine.Evaluate(m, engine.Options{OutputVariance: true})
	if err != nil {
		t.Fatal(err)
	}
	for layer := 1; layer <= 2; layer++ {
		var stdout, stderr bytes.Buffer
		args := []string{"mc", "-model", path, "-layer", []string{"", "1", "2"}[layer], "-samples", "20000", "-seed", "3"}
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("layer %d: %v (%s)", layer, err, stderr.String())
		}
		var out mcOut
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		i := layer - 1
		d := []int{2, 1}[i]
		if len(out.Mean) != 20 || len(out.Mean[0]) != d || len(out.Var) != 20 {
			t.Fatalf("layer %d: mean is %d×%d", layer, len(out.Mean), len(out.Mean[0]))
		}
		s2 := m.Layers[i].NoiseVariance
		for n := 0; n < 20; n++ {
			for k := 0; k < d; k++ {
				mean := res.Messages[i].Mean.At(n, k)
				tv := res.Messages[i].Var.At(n, k) + 2*s2*(res.Layers[i].CompressionPerDatum[n]/float64(d)+res.Layers[i].PropagationPerDatum[n]/float64(d))
				// 4.5 standard errors: 80 comparisons per layer (two-sided
				// p = 6.8e-6 each).
				if z := (out.Mean[n][k] - mean) / out.MeanSE[n][k]; math.Abs(z) > 4.5 {
					t.Errorf("layer %d datum %d output %d: mean %v, message %v (z %.1f)", layer, n, k, out.Mean[n][k], mean, z)
				}
				if z := (out.Var[n][k] - tv) / out.VarSE[n][k]; math.Abs(z) > 4.5 {
					t.Errorf("layer %d datum %d output %d: var %v, exact %v (z %.1f)", layer, n, k, out.Var[n][k], tv, z)
				}
			}
		}
	}
}

// TestMCChain checks `viz mc -chain`: one set of moments per layer, and
// the first layer's matching the single-layer command with the same
// seed's statistics.
func TestMCChain(t *testing.T) {
	m := mcModel(3, 6)
	path := writeMCModel(t, m, nil)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"mc", "-model", path, "-chain", "-samples", "5000"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v (%s)", err, stderr.String())
	}
	var out struct {
		Layers []mcOut `json:"layers"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Layers) != 3 {
		t.Fatalf("%d layers, want 3", len(out.Layers))
	}
	for i, want := range []int{2, 2, 1} {
		if len(out.Layers[i].Mean) != 20 || len(out.Layers[i].Mean[0]) != want {
			t.Errorf("layer %d: %d×%d moments, want 20×%d", i+1, len(out.Layers[i].Mean), len(out.Layers[i].Mean[0]), want)
		}
		for _, row := range out.Layers[i].Var {
			for _, v := range row {
				// Every layer adds its noise 0.01.
				if !(v >= 0.01*0.9) {
					t.Errorf("layer %d: variance %v below the noise", i+1, v)
				}
			}
		}
	}
}

// TestMCBadInput checks that bad requests exit with status 2 and a clear
// message.
func TestMCBadInput(t *testing.T) {
	path := writeMCModel(t, mcModel(2, 5), nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mc"}, "-model FILE is required"},
		{[]string{"mc", "-model", path, "-layer", "3"}, "out of range"},
		{[]string{"mc", "-model", path, "-layer", "0"}, "out of range"},
		{[]string{"mc", "-model", path, "-samples", "1"}, "samples"},
		{[]string{"mc", "-model", path, "-samples", "1000000000000"}, "samples"},
		{[]string{"mc", "-model", path, "-chain", "-samples", "0"}, "samples"},
		{[]string{"mc", "-model", filepath.Join(t.TempDir(), "missing.json")}, "no such file"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tc.args, &stdout, &stderr)
		var ue usageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want a usage error mentioning %q", tc.args, err, tc.want)
		}
	}
}

// TestMCOriginalUnits checks that `viz mc` gives the last layer's moments
// in the data's original units, as `viz predict` does, and names them: on
// a one-layer model with certain inputs the true response's mean is the
// message mean, and its variance the message's plus 2σ²·compression (the
// identity of TestMC), so both must agree within the Monte Carlo error
// after the same normalisation is undone (y = 5 + 2·normalised).
func TestMCOriginalUnits(t *testing.T) {
	m := mcModel(1, 8)
	norm := map[string]json.RawMessage{"normalization": json.RawMessage(`{"x_mean":[0],"x_scale":[1],"y_mean":[5],"y_scale":[2]}`)}
	path := writeMCModel(t, m, norm)
	res, _, err := engine.Evaluate(m, engine.Options{OutputVariance: true})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"mc", "-model", path, "-samples", "20000", "-seed", "5"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v (%s)", err, stderr.String())
	}
	var out mcMomentsJSON
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Layer != 1 || out.Units != (mcUnitsJSON{"original units", "(original units)²", "original units", "(original units)²"}) {
		t.Errorf("layer %d, units %+v", out.Layer, out.Units)
	}
	s2 := m.Layers[0].NoiseVariance
	for n := range 20 {
		mean := 5 + 2*res.Messages[0].Mean.At(n, 0)
		vr := 4 * (res.Messages[0].Var.At(n, 0) + 2*s2*res.Layers[0].CompressionPerDatum[n])
		if z := (out.Mean[n][0] - mean) / out.MeanSE[n][0]; math.Abs(z) > 4.5 {
			t.Errorf("row %d: MC mean %.5g ± %.2g, message mean in original units %.5g", n+1, out.Mean[n][0], out.MeanSE[n][0], mean)
		}
		if z := (out.Var[n][0] - vr) / out.VarSE[n][0]; math.Abs(z) > 4.5 {
			t.Errorf("row %d: MC variance %.5g ± %.2g, want %.5g", n+1, out.Var[n][0], out.VarSE[n][0], vr)
		}
	}
}
