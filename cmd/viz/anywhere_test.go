package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
)

// Model files as a new user meets them: fitted in one folder, used from
// another (a temporary folder with no checkout and no ../shared beside it),
// by viz run as its own process there (vizProc).

// vizIn runs viz with args as a process in the folder dir and returns its
// standard output, failing the test on an error.
func vizIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := vizErrIn(t, dir, args...)
	if err != nil {
		t.Fatalf("viz %s (in %s): %v", strings.Join(args, " "), dir, err)
	}
	return out
}

// vizErrIn runs viz with args as a process in the folder dir; its error
// carries what viz wrote to standard error.
func vizErrIn(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	stdout, stderr, err := vizProc(t, dir, args...)
	if err != nil {
		return stdout, fmt.Errorf("%w (stderr: %s)", err, stderr)
	}
	return stdout, nil
}

// modelDatasetSection returns the dataset section of the model file at path.
func modelDatasetSection(t *testing.T, path string) datasetJSON {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Dataset datasetJSON `json:"dataset"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Dataset
}

// TestCSVModelFromAnyFolder: a model of a CSV fitted with a relative path
// records the file's absolute path and its sha256, so viz latent and viz
// figure latent work from another folder; a changed file is refused,
// saying so; a model that recorded the path as given (older files) finds
// its data beside the model file.
func TestCSVModelFromAnyFolder(t *testing.T) {
	fitDir, elsewhere := t.TempDir(), t.TempDir()
	walk := filepath.Join(fitDir, "walk.csv")
	f, err := os.Create(walk)
	if err != nil {
		t.Fatal(err)
	}
	if err := dataset.WriteWalkCSV(f, 120, 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	vizIn(t, fitDir, "fit", "-data", "walk.csv", "-hidden", "2", "-inducing", "4", "-restarts", "1", "-iters", "3", "-quiet", "-out", "m.json")
	model := filepath.Join(fitDir, "m.json")
	sec := modelDatasetSection(t, model)
	sum, err := dataset.FileSHA256(walk)
	if err != nil {
		t.Fatal(err)
	}
	if sec.Spec != walk || sec.SHA256 != sum {
		t.Errorf("the model records %q (sha256 %q), want %q (%s)", sec.Spec, sec.SHA256, walk, sum)
	}
	latentArgs := []string{"latent", "-model", model, "-gp-iters", "0", "-format", "csv"}
	if out := vizIn(t, elsewhere, latentArgs...); !strings.Contains(out, "geometry") {
		t.Errorf("viz latent from another folder wrote no geometry score:\n%s", out)
	}
	vizIn(t, elsewhere, "figure", "latent", "-model", model, "-o", "latent.svg")
	if fileSize(t, filepath.Join(elsewhere, "latent.svg")) == 0 {
		t.Error("viz figure latent from another folder wrote an empty figure")
	}

	// An older file: the path as given, no checksum.
	old := filepath.Join(fitDir, "old.json")
	b, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"spec": "`+walk+`"`), []byte(`"spec": "walk.csv"`), 1)
	b = bytes.Replace(b, []byte(`"sha256": "`+sum+`",`), nil, 1)
	if err := os.WriteFile(old, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if sec := modelDatasetSection(t, old); sec.Spec != "walk.csv" || sec.SHA256 != "" {
		t.Fatalf("the older file records %q (sha256 %q)", sec.Spec, sec.SHA256)
	}
	vizIn(t, elsewhere, "latent", "-model", old, "-gp-iters", "0")

	// The data file changed since the fit.
	if err := os.WriteFile(walk, []byte("x_time,y1\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = vizErrIn(t, elsewhere, latentArgs...)
	if err == nil || !strings.Contains(err.Error(), walk+", and that file has changed since") || !strings.Contains(err.Error(), "give the data it was fitted to with -data") {
		t.Errorf("viz latent with the data file changed: %v", err)
	}
	os.Remove(walk)
	_, err = vizErrIn(t, elsewhere, latentArgs...)
	if err == nil || !strings.Contains(err.Error(), "which cannot be read here") {
		t.Errorf("viz latent with the data file gone: %v", err)
	}
}

// TestRobotPathModelFromAnyFolder: a model fitted with -data robot:PATH
// refers to the file by its checksum and the path it was fitted from, so
// that from another folder, with nothing in the cache, it loads the data
// from that path; when the file is gone from there, the message says what
// was tried and how to get the data, and the cache serves; another file
// at the path is not taken for the data.
func TestRobotPathModelFromAnyFolder(t *testing.T) {
	r, real := publicFile(t, "robot")
	fitDir, elsewhere, cache := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv(dataset.DataDirEnv, cache)
	raw, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(fitDir, "floor.txt")
	if err := os.WriteFile(data, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	vizIn(t, fitDir, "fit", "-data", "robot:floor.txt", "-hidden", "1", "-inducing", "4", "-restarts", "1", "-iters", "2", "-quiet", "-out", "m.json")
	model := filepath.Join(fitDir, "m.json")
	b, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"path": "`+data+`"`)) || !bytes.Contains(b, []byte(`"sha256": "`+r.SHA256+`"`)) {
		t.Fatalf("the model file does not refer to %s by its path and checksum", data)
	}
	want := vizIn(t, elsewhere, "eval", "-model", model)

	if err := os.Remove(data); err != nil {
		t.Fatal(err)
	}
	_, err = vizErrIn(t, elsewhere, "eval", "-model", model)
	for _, part := range []string{data + ", where it was fitted, is not there", filepath.Join(cache, r.Dir, r.File), "viz data get robot"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("viz eval with the data gone: %v; want it to say %q", err, part)
		}
	}
	small, err := os.ReadFile(filepath.Join(datasetTestdata, "robot_small.txt")) // robot data, but not the public file
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, small, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err = vizErrIn(t, elsewhere, "eval", "-model", model); err == nil || !strings.Contains(err.Error(), data+", where it was fitted, holds another file") {
		t.Errorf("viz eval with another file at the path: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(cache, r.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, r.Dir, r.File), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := vizIn(t, elsewhere, "eval", "-model", model); got != want {
		t.Error("the model evaluates otherwise with its data from the cache")
	}
}

// TestFitRecordsShape: viz fit -shape records the images' shape in the
// model file, so viz figure faces needs no -shape; a shape that does not
// fit the outputs is refused, naming the flag.
func TestFitRecordsShape(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var csv strings.Builder
	for k := range 6 {
		if k > 0 {
			csv.WriteByte(',')
		}
		fmt.Fprintf(&csv, "y%d", k+1)
	}
	csv.WriteByte('\n')
	for range 30 {
		for k := range 6 {
			if k > 0 {
				csv.WriteByte(',')
			}
			fmt.Fprintf(&csv, "%d", rng.IntN(256))
		}
		csv.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "images.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fit := []string{"fit", "-data", "images.csv", "-hidden", "2", "-inducing", "4", "-restarts", "1", "-iters", "2", "-quiet"}
	vizIn(t, dir, append(fit, "-shape", "2x3", "-out", "m.json")...)
	vizIn(t, t.TempDir(), "figure", "faces", "-model", filepath.Join(dir, "m.json"), "-grid", "2", "-o", "faces.svg")
	_, err := vizErrIn(t, dir, append(fit, "-shape", "4x4", "-out", "bad.json")...)
	if err == nil || !strings.Contains(err.Error(), "-shape: images of 4 × 4 pixels need 16 outputs") {
		t.Errorf("viz fit -shape 4x4 of 6 outputs: %v", err)
	}
}

// TestDataGetOffline: viz data get that cannot download says how to use a
// file one has already: -data robot:PATH, or the data folder and
// DGPVIZ_DATA.
func TestDataGetOffline(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(dataset.DataDirEnv, cache)
	defer func(f func(*dataset.Fetcher)) { configureFetcher = f }(configureFetcher)
	configureFetcher = func(f *dataset.Fetcher) {
		f.Attempts = 1
		f.Client = offlineClient()
	}
	// In this process, whose fetcher is offline: from a folder of its own.
	t.Chdir(t.TempDir())
	err := run(context.Background(), []string{"data", "get", "robot"}, io.Discard, io.Discard)
	for _, part := range []string{"-data robot:PATH", filepath.Join(cache, "robot_wireless", "uw-floor.txt"), "DGPVIZ_DATA"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("viz data get offline: %v; want it to say %q", err, part)
		}
	}
}

// offlineClient is an HTTP client on a machine without a network.
func offlineClient() *http.Client {
	return &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("dial tcp: connect: network is unreachable")
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestColumnNamesCarriedThrough: a CSV's own column names, in the model
// file with their unit beside them, name the columns of viz predict's CSV and JSON, viz eval's
// and viz latent's output, from another folder: x_time stays x_time, and
// the outputs are y1_mean, y1_var, …, a hidden layer's layer1_dim1_mean.
func TestColumnNamesCarriedThrough(t *testing.T) {
	dir := t.TempDir()
	var csv strings.Builder
	csv.WriteString("x_time,y1 [dBm],y_ap2 [dBm],truth_x,truth_y\n")
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 40 {
		fmt.Fprintf(&csv, "%d,%.3f,%.3f,%d,%d\n", i, rng.NormFloat64(), rng.NormFloat64()-50, i%7, i%5)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	vizIn(t, dir, "fit", "-data", "mine.csv", "-hidden", "2", "-inducing", "4", "-restarts", "1", "-iters", "2", "-quiet", "-out", "m.json")
	model := filepath.Join(dir, "m.json")
	b, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"y_names": [`)) || !bytes.Contains(b, []byte(`"y_ap2"`)) || !bytes.Contains(b, []byte(`"x_names": [`)) || !bytes.Contains(b, []byte(`"y_unit": "dBm"`)) {
		t.Error("the model file does not hold the data's column names and their unit")
	}
	elsewhere := t.TempDir()
	out := vizIn(t, elsewhere, "predict", "-model", model, "-x", "1,2", "-format", "csv")
	head, _, _ := strings.Cut(out, "\n")
	var names []string
	for _, h := range strings.Split(head, ",") {
		name, _, _ := strings.Cut(h, " [") // the unit, whatever it is
		names = append(names, name)
	}
	want := "x_time layer1_dim1_mean layer1_dim1_var layer1_dim2_mean layer1_dim2_var y1_mean y1_var y_ap2_mean y_ap2_var"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("viz predict's CSV columns %q, want %q", got, want)
	}
	var pj predictJSON
	if err := json.Unmarshal([]byte(vizIn(t, elsewhere, "predict", "-model", model, "-x", "1")), &pj); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(pj.XColumns, pj.Layers[0].Columns, pj.Layers[1].Columns); got != "[x_time] [layer1_dim1 layer1_dim2] [y1 y_ap2]" {
		t.Errorf("viz predict's JSON columns %s", got)
	}
	var ej evalJSON
	if err := json.Unmarshal([]byte(vizIn(t, elsewhere, "eval", "-model", model)), &ej); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ej.Messages[1].Columns); got != "[y1 y_ap2]" {
		t.Errorf("viz eval's columns %s", got)
	}
	var lj latentJSON
	if err := json.Unmarshal([]byte(vizIn(t, elsewhere, "latent", "-model", model, "-gp-iters", "0")), &lj); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(lj.Inputs, lj.Outputs); got != "[x_time] [y1 y_ap2]" {
		t.Errorf("viz latent's columns %s", got)
	}
}
