package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/train"
)

// TestDataGetBadInput: viz data without a known action or data set says
// what it wants, with exit status 2.
func TestDataGetBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"data"}, "want get"},
		{[]string{"data", "fetch"}, `unknown action "fetch"`},
		{[]string{"data", "get"}, "name the data sets: robot, frey or all"},
		{[]string{"data", "get", "mnist"}, `unknown data set "mnist": want robot, frey or all`},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tc.args, &stdout, &stderr)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
}

// TestDataNotHere: on a machine without the data, -data robot and -data
// frey fail with one line naming the command that gets them; once the file
// is in the data directory they load.
func TestDataNotHere(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root) // no ../shared/data beside it
	t.Setenv(dataset.DataDirEnv, filepath.Join(root, "cache"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", "-data", "robot", "-quiet"}, "get them with: go run ./cmd/viz data get robot"},
		{[]string{"serve", "-data", "frey"}, "get them with: go run ./cmd/viz data get frey"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tc.args, &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line containing %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	fixture, err := os.ReadFile(filepath.Join(datasetTestdata, "robot_small.txt"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "cache", "robot_wireless", "uw-floor.txt")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, fixture, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"fit", "-data", "robot", "-iters", "2", "-inducing", "4", "-quiet", "-out", filepath.Join(root, "m.json")}, &stdout, &stderr); err != nil {
		t.Fatalf("fit -data robot with the file in the data directory: %v (%s)", err, stderr.String())
	}
}

// datasetTestdata is internal/dataset/testdata, made absolute before a
// test changes the working directory.
var datasetTestdata, _ = filepath.Abs("../../internal/dataset/testdata")

// TestDataWalk: viz data walk writes the generator's file, which the
// robot preset fits by its shape; bad flags are usage errors.
func TestDataWalk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "walk.csv")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"data", "walk", "-rows", "300", "-seed", "4", "-o", path}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := dataset.WriteWalkCSV(&want, 300, 4); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Error("viz data walk wrote another file than dataset.WriteWalkCSV")
	}
	ds, err := dataset.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	x, y := dataset.FitNormalizer(ds.X).Apply(ds.X), dataset.FitNormalizer(ds.Y).Apply(ds.Y)
	robot, _ := train.PresetNamed("robot", 1)
	if p, ok := train.DefaultPreset(x, y, 1); !ok || p.Name != robot.Name {
		t.Errorf("the walk's preset: %q (%v), want robot", p.Name, ok)
	}
	for _, ext := range []string{"npy", "npz", "parquet"} { // the same data in other formats
		p := filepath.Join(filepath.Dir(path), "walk."+ext)
		if err := run(context.Background(), []string{"data", "walk", "-rows", "300", "-seed", "4", "-o", p}, &stdout, &stderr); err != nil {
			t.Fatal(err)
		}
		np, err := dataset.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if n, m := np.Rows(); n != 270 || m != 30 || np.Name != ext+":walk."+ext {
			t.Errorf("%s: %s, %d + %d rows", p, np.Name, n, m)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"data", "walk", "-rows", "10"}, "name the file to write with -o"},
		{[]string{"data", "walk", "-rows", "0", "-o", path}, "-rows 0: want ≥ 1"},
		{[]string{"data", "walk", "-o", "walk.txt"}, "want a file ending in"},
	} {
		err := run(context.Background(), tc.args, &stdout, &stderr)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
}
