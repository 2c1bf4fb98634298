package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestUnitsEverywhere: a CSV whose header names its units (examples/loop.csv:
// x_time [s], y_beacon… [dBm], truth_… [m]) gives them to the model file
// and to every number of viz predict, viz eval and viz latent that has one,
// the baselines' errors included; data without units say "original units".
func TestUnitsEverywhere(t *testing.T) {
	dir := t.TempDir()
	data := "csv:" + filepath.Join("..", "..", "examples", "loop.csv")
	model := filepath.Join(dir, "loop.json")
	viz := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("viz %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String()
	}
	viz("fit", "-data", data, "-hidden", "2", "-inducing", "6", "-iters", "5", "-quiet", "-out", model)

	var mf struct {
		Data struct {
			XUnit string `json:"x_unit"`
			YUnit string `json:"y_unit"`
		} `json:"data"`
	}
	if err := json.Unmarshal(readFile(t, model), &mf); err != nil || mf.Data.XUnit != "s" || mf.Data.YUnit != "dBm" {
		t.Errorf("model file: x_unit %q, y_unit %q (%v), want s and dBm", mf.Data.XUnit, mf.Data.YUnit, err)
	}

	var pj struct {
		Units  struct{ X string }
		Layers []struct {
			Units struct{ Mean, Var string }
		}
	}
	if err := json.Unmarshal([]byte(viz("predict", "-model", model, "-x", "3,40")), &pj); err != nil {
		t.Fatal(err)
	}
	if last := pj.Layers[len(pj.Layers)-1].Units; pj.Units.X != "s" || last.Mean != "dBm" || last.Var != "dBm²" || pj.Layers[0].Units.Mean != "latent" {
		t.Errorf("viz predict: units x %q, layers %+v; want s, latent for hidden layers, dBm and dBm² for the last", pj.Units.X, pj.Layers)
	}
	head, err := csv.NewReader(strings.NewReader(viz("predict", "-model", model, "-x", "3", "-format", "csv"))).Read()
	if err != nil {
		t.Fatal(err)
	}
	if h := strings.Join(head, ","); !strings.Contains(h, "[s]") || !strings.Contains(h, "[dBm]") || !strings.Contains(h, "[dBm²]") {
		t.Errorf("viz predict -format csv: header %q, want [s], [dBm] and [dBm²]", h)
	}

	if ev := viz("eval", "-model", model); !strings.Contains(ev, `"dBm"`) || !strings.Contains(ev, `"dBm²"`) {
		t.Errorf("viz eval names no dBm: %.400s", ev)
	}

	rows, err := csv.NewReader(strings.NewReader(viz("latent", "-model", model, "-data", data, "-gp-iters", "5", "-format", "csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rmse := 0
	for _, r := range rows {
		if r[0] == "test RMSE" {
			rmse++
			if r[4] != "dBm" {
				t.Errorf("viz latent: %q of %q in %q, want dBm", r[0], r[1], r[4])
			}
		}
	}
	if rmse != 3 { // the model, the training mean, the one-layer GP
		t.Errorf("viz latent: %d test RMSE rows, want 3:\n%v", rmse, rows)
	}
	var lj struct {
		Geometry struct {
			Units struct {
				Radius string `json:"radius"`
			} `json:"units"`
		} `json:"geometry"`
	}
	if err := json.Unmarshal([]byte(viz("latent", "-model", model, "-data", data, "-gp-iters", "0")), &lj); err != nil || lj.Geometry.Units.Radius != "m" {
		t.Errorf("viz latent: revisit radius in %q (%v), want m", lj.Geometry.Units.Radius, err)
	}

	// The same data without units in the header: "original units".
	text := string(readFile(t, filepath.Join("..", "..", "examples", "loop.csv")))
	for _, u := range []string{" [s]", " [dBm]", " [m]"} {
		text = strings.ReplaceAll(text, u, "")
	}
	bare := writeFile(t, "bare.csv", text)
	viz("fit", "-data", "csv:"+bare, "-hidden", "2", "-inducing", "6", "-iters", "5", "-quiet", "-out", model)
	if err := json.Unmarshal([]byte(viz("predict", "-model", model, "-x", "3")), &pj); err != nil {
		t.Fatal(err)
	}
	if last := pj.Layers[len(pj.Layers)-1].Units; pj.Units.X != "original units" || last.Mean != "original units" || last.Var != "(original units)²" {
		t.Errorf("viz predict without units: x %q, last layer %+v, want original units", pj.Units.X, last)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLatentCollapsed: a model whose first hidden layer's third dimension
// has collapsed (its q(u) means zeroed: every row's mean is then the same,
// its variance the prior's) is reported so by viz latent, in JSON, CSV and
// on stderr, and marked on viz figure latent's axes.
func TestLatentCollapsed(t *testing.T) {
	dir := t.TempDir()
	data := "csv:" + filepath.Join("..", "..", "examples", "loop.csv")
	fitted := filepath.Join(dir, "fitted.json")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"fit", "-data", data, "-hidden", "3", "-inducing", "6", "-iters", "5", "-quiet", "-out", fitted}, &stdout, &stderr); err != nil {
		t.Fatalf("viz fit: %v\n%s", err, stderr.String())
	}
	var mf map[string]any
	if err := json.Unmarshal(readFile(t, fitted), &mf); err != nil {
		t.Fatal(err)
	}
	for _, row := range mf["layers"].([]any)[0].(map[string]any)["q_mu"].([]any) {
		row.([]any)[2] = 0.0
	}
	b, _ := json.Marshal(mf)
	model := writeFile(t, "collapsed.json", string(b))

	for _, c := range []struct {
		model string
		want  []int
	}{{fitted, []int{}}, {model, []int{3}}} {
		stdout.Reset()
		stderr.Reset()
		if err := run(context.Background(), []string{"latent", "-model", c.model, "-data", data, "-gp-iters", "0"}, &stdout, &stderr); err != nil {
			t.Fatalf("viz latent: %v\n%s", err, stderr.String())
		}
		var out struct {
			Hidden []struct {
				Layer     int
				Width     int
				Collapsed []int
			} `json:"hidden_layers"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Hidden) != 1 || out.Hidden[0].Width != 3 || !slices.Equal(out.Hidden[0].Collapsed, c.want) {
			t.Errorf("%s: hidden layers %+v, want layer 1 of width 3 with collapsed dimensions %v", filepath.Base(c.model), out.Hidden, c.want)
		}
		if said := strings.Contains(stderr.String(), "hidden layer 1, dimension 3 has collapsed"); said != (len(c.want) > 0) {
			t.Errorf("%s: stderr %q", filepath.Base(c.model), stderr.String())
		}
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"latent", "-model", model, "-data", data, "-gp-iters", "0", "-format", "csv"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "collapsed dimension,hidden layer 1,3,") {
		t.Errorf("viz latent -format csv names no collapsed dimension:\n%s", stdout.String())
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"figure", "latent", "-model", model, "-data", data, "-format", "svg", "-o", "-"}, &stdout, &stderr); err != nil {
		t.Fatalf("viz figure latent: %v\n%s", err, stderr.String())
	}
	if c := strings.Count(stdout.String(), "h1 dimension 3 (collapsed)"); c != 2 {
		t.Errorf("viz figure latent marks dimension 3 collapsed on %d axes, want 2", c)
	}
}
