package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/train"
)

// TestFreyFitPredict fits the paper's autoencoder shape to the generated
// Frey fixture (`viz fit -data frey:PATH -hidden 2`, a few iterations) and
// predicts faces from a CSV, one face per row: the first layer's message is
// a 2-D latent position with positive variance and the last is the
// reconstruction in grey levels. The faces are new (each the average of two
// consecutive frames), so held-out faces work.
func TestFreyFitPredict(t *testing.T) {
	if testing.Short() {
		t.Skip("fits the Frey autoencoder on the fixture (tens of seconds under -race): not in the short tier")
	}
	const fixture = "../../internal/dataset/testdata/frey_small.mat"
	dir := t.TempDir()
	model := filepath.Join(dir, "m.json")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"fit", "-data", "frey:" + fixture, "-hidden", "2", "-inducing", "15", "-iters", "60", "-quiet", "-out", model}, &stdout, &stderr); err != nil {
		t.Fatalf("viz fit: %v\n%s", err, stderr.String())
	}
	raw, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	// The autoencoder preset's input kernel, with -hidden and -inducing
	// given: an ARD RBF whose lengthscales start equal (all at the
	// isotropic start; at 1 each, every pair of frames is uncorrelated).
	if !strings.Contains(string(raw), `"input_kernel": "rbf"`) || !strings.Contains(string(raw), `"input_iso_start": true`) {
		t.Error("the frey model's input layer is not the preset's RBF started isotropic by default")
	}
	ds, err := dataset.LoadFrey(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var csv strings.Builder
	faces := []int{3, 31}
	for _, f := range faces {
		for k := range dataset.FreyPixels {
			v := math.Round((ds.Y.At(f, k) + ds.Y.At(f+1, k)) / 2) // between two frames: not a training frame
			if k > 0 {
				csv.WriteByte(',')
			}
			fmt.Fprint(&csv, v)
		}
		csv.WriteByte('\n')
	}
	in := filepath.Join(dir, "faces.csv")
	if err := os.WriteFile(in, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"predict", "-model", model, "-in", in}, &stdout, &stderr); err != nil {
		t.Fatalf("viz predict: %v\n%s", err, stderr.String())
	}
	var out predictJSON
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Layers) != 2 || len(out.X) != len(faces) {
		t.Fatalf("%d layers, %d faces; want 2, %d", len(out.Layers), len(out.X), len(faces))
	}
	for i := range faces {
		lat := out.Layers[0]
		if len(lat.Mean[i]) != 2 || !(lat.Var[i][0] > 0) || !(lat.Var[i][1] > 0) {
			t.Errorf("face %d: latent mean %v var %v, want 2-D with positive variance", i, lat.Mean[i], lat.Var[i])
		}
		rec := out.Layers[1].Mean[i]
		if len(rec) != dataset.FreyPixels {
			t.Fatalf("face %d: %d reconstructed pixels", i, len(rec))
		}
		var sq float64
		for k, v := range rec {
			d := v - ds.Y.At(faces[i], k)
			sq += d * d
		}
		// Grey levels: the fixture spans 8–238; a reconstruction in
		// normalised units would be off by ~100 RMS.
		if rms := math.Sqrt(sq / dataset.FreyPixels); rms > 30 {
			t.Errorf("face %d: reconstruction %.1f grey levels RMS from its frame: not in grey levels?", i, rms)
		}
	}
}

// TestServeFreyOpensInPreset checks that `viz serve -data frey:PATH`
// serves the page with the Frey faces as the default data set and the
// preset's architecture (560 → 2 → 560, train.FreyInducing inducing
// points), and that -hidden overrides the preset.
func TestServeFreyOpensInPreset(t *testing.T) {
	const fixture = "frey:../../internal/dataset/testdata/frey_small.mat"
	url, stop := startServe(t, "-addr", "127.0.0.1:0", "-data", fixture, "-log-level", "warn")
	defer stop()
	body := pageOf(t, url)
	page := string(body)
	for _, want := range []string{`value="frey" selected`, `data-view="autoencoder"`, `id="hidden"`, `value="2"`, fmt.Sprintf(`value="%d"`, train.FreyInducing)} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	o, err := parseServe([]string{"-data", fixture, "-hidden", "3"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := dataset.NewCatalog(o.data, o.limits.MaxRows)
	if err != nil {
		t.Fatal(err)
	}
	o.cfg.Dataset = cat.NameOf(o.data[0])
	if c, _ := presetDefaults(o, cat); len(c.Hidden) != 1 || c.Hidden[0] != 3 {
		t.Errorf("-hidden 3 with frey data: hidden %v, want [3]", c.Hidden)
	}
}

// TestFigureFaces draws the faces figure of a quick fixture fit in all
// three formats, under its old name frey too, with the images' shape from
// the data set the file records or from -shape, and refuses a model that
// is not an autoencoder of images with one 2-D hidden layer, and a shape
// of other pixels.
func TestFigureFaces(t *testing.T) {
	if testing.Short() {
		t.Skip("fits the Frey autoencoder on the fixture (tens of seconds under -race): not in the short tier")
	}
	const fixture = "../../internal/dataset/testdata/frey_small.mat"
	dir := t.TempDir()
	model := filepath.Join(dir, "m.json")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"fit", "-data", "frey:" + fixture, "-hidden", "2", "-iters", "10", "-quiet", "-out", model}, &stdout, &stderr); err != nil {
		t.Fatalf("viz fit: %v\n%s", err, stderr.String())
	}
	for _, tc := range []struct {
		kind, ext string
		extra     []string
	}{{"faces", "png", nil}, {"faces", "svg", []string{"-shape", "28x20"}}, {"frey", "pdf", nil}} {
		out := filepath.Join(dir, tc.kind+"."+tc.ext)
		args := append([]string{"figure", tc.kind, "-model", model, "-grid", "3", "-o", out}, tc.extra...)
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("viz figure %s %s: %v\n%s", tc.kind, tc.ext, err, stderr.String())
		}
		if fi, err := os.Stat(out); err != nil || fi.Size() < 1000 {
			t.Errorf("%s: %v, %v", out, fi, err)
		}
	}
	step := filepath.Join(dir, "step.json")
	fitStep(t, dir, "step.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-model", step}, "has a 1-D hidden layer; the figure needs an autoencoder with one 2-D hidden layer"},
		{[]string{"-model", model, "-shape", "20x20"}, "images of 20 × 20 pixels need 400 outputs"},
		{[]string{"-model", model, "-shape", "big"}, "-shape: image shape \"big\""},
	} {
		err := run(context.Background(), append(append([]string{"figure", "faces"}, tc.args...), "-o", filepath.Join(dir, "x.png")), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}
