package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
)

// publicFile returns the path of a public data set's file on this machine
// (../shared/data beside the repository, or the data directory), skipping
// the test when it is absent: only the real file, checksum and all, is
// referred to.
func publicFile(t *testing.T, name string) (dataset.Remote, string) {
	t.Helper()
	r, _ := dataset.RemoteNamed(name)
	for _, dir := range []string{filepath.Join("..", "..", "..", "shared", "data"), os.Getenv(dataset.DataDirEnv)} {
		p := filepath.Join(dir, r.Dir, r.File)
		if dir != "" {
			if _, err := os.Stat(p); err == nil {
				return r, p
			}
		}
	}
	t.Skipf("the %s data are not on this machine (../shared/data or $%s): skipping", r.Title, dataset.DataDirEnv)
	return r, ""
}

// TestModelFileRefersToData: a model of the Frey faces refers to the
// public file by its checksum instead of holding its 1965 frames, so its
// file is smaller than the data file; it predicts and evaluates exactly as
// the file that holds the data (-embed-data); without the data on the
// machine, reading it says the one command that gets them.
func TestModelFileRefersToData(t *testing.T) {
	r, path := publicFile(t, "frey")
	cache := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cache, r.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mustAbs(t, path), filepath.Join(cache, r.Dir, r.File)); err != nil {
		t.Fatal(err)
	}
	t.Setenv(dataset.DataDirEnv, cache)
	dir := t.TempDir()
	fit := []string{"fit", "-data", "frey", "-hidden", "2", "-inducing", "6", "-restarts", "1", "-iters", "2", "-quiet"}
	ref, full := filepath.Join(dir, "ref.json"), filepath.Join(dir, "full.json")
	var stderr bytes.Buffer
	for _, args := range [][]string{append(fit, "-out", ref), append(fit, "-embed-data", "-out", full)} {
		if err := run(context.Background(), args, &bytes.Buffer{}, &stderr); err != nil {
			t.Fatalf("viz %s: %v (%s)", strings.Join(args, " "), err, stderr.String())
		}
	}
	refSize, fullSize := fileSize(t, ref), fileSize(t, full)
	if refSize >= r.Size || fullSize <= r.Size {
		t.Errorf("model files of %d B (refers to the data) and %d B (holds them); the data file is %d B", refSize, fullSize, r.Size)
	}
	ds, err := dataset.Load("frey")
	if err != nil {
		t.Fatal(err)
	}
	var frames strings.Builder
	for i := range 5 {
		for k, v := range ds.Y.RawRowView(i * 300) {
			if k > 0 {
				frames.WriteByte(',')
			}
			fmt.Fprint(&frames, v)
		}
		frames.WriteByte('\n')
	}
	in := writeFile(t, "frames.csv", frames.String())
	outputs := func(model string) []string {
		var out []string
		for _, args := range [][]string{{"predict", "-model", model, "-in", in}, {"eval", "-model", model}, {"latent", "-model", model, "-format", "csv"}} {
			var stdout bytes.Buffer
			if err := run(context.Background(), args, &stdout, &stderr); err != nil {
				t.Fatalf("viz %s: %v (%s)", strings.Join(args, " "), err, stderr.String())
			}
			out = append(out, stdout.String())
		}
		return out
	}
	a, b := outputs(ref), outputs(full)
	for i, what := range []string{"viz predict", "viz eval", "viz latent"} {
		if a[i] != b[i] {
			t.Errorf("%s differs between the file that refers to the data and the one that holds them", what)
		}
	}

	// scripts/predict.py needs no data for new inputs, and says so when
	// asked for the training inputs it does not have.
	py := numpyPython(t)
	cmd := exec.Command(py, "../../scripts/predict.py", ref, in)
	var pout, perr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &pout, &perr
	if err := cmd.Run(); err != nil {
		t.Fatalf("predict.py: %v\n%s", err, perr.String())
	}
	var want, got predictJSON
	if err := json.Unmarshal([]byte(a[0]), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(pout.Bytes(), &got); err != nil {
		t.Fatalf("predict.py's output: %v", err)
	}
	for i := range want.Layers {
		compareRows(t, fmt.Sprintf("layer %d mean", i+1), want.Layers[i].Mean, got.Layers[i].Mean)
		compareRows(t, fmt.Sprintf("layer %d var", i+1), want.Layers[i].Var, got.Layers[i].Var)
	}
	perr.Reset()
	cmd = exec.Command(py, "../../scripts/predict.py", ref)
	cmd.Stderr = &perr
	if err := cmd.Run(); err == nil || !strings.Contains(perr.String(), "the model's data are the frey data set's (frey_rawface.mat") {
		t.Errorf("predict.py at the training inputs of a file without them: %v, %q", err, perr.String())
	}

	// Elsewhere, without the data (nor where the model was fitted): the
	// one command that gets them.
	if err := os.Remove(filepath.Join(cache, r.Dir, r.File)); err != nil {
		t.Fatal(err)
	}
	t.Setenv(dataset.DataDirEnv, t.TempDir())
	t.Chdir(t.TempDir())
	err = run(context.Background(), []string{"predict", "-model", ref, "-in", in}, &bytes.Buffer{}, &stderr)
	if err == nil || !strings.Contains(err.Error(), "the model's data are the Frey faces data set's") || !strings.Contains(err.Error(), "get them with: go run ./cmd/viz data get frey") {
		t.Errorf("without the data: %v, want the command that gets them", err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
