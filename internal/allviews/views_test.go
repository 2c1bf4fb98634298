package allviews

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/view/autoencoder"
	"dgpviz/internal/view/explorer"
	"dgpviz/internal/view/regression"
)

// TestKindByShape: the view follows the data's shape, the README's
// examples included: one output a regression, several outputs the
// explorer, outputs that are the inputs the autoencoder.
func TestKindByShape(t *testing.T) {
	for _, c := range []struct {
		name string
		ds   func() (*dataset.Dataset, error)
		want string
	}{
		{"step", func() (*dataset.Dataset, error) { return dataset.Step(), nil }, regression.Kind},
		{"examples/loop.csv", func() (*dataset.Dataset, error) {
			return dataset.LoadCSV("../../examples/loop.csv", dataset.CSVOptions{})
		}, explorer.Kind},
		{"examples/spot.csv", func() (*dataset.Dataset, error) {
			return dataset.LoadCSV("../../examples/spot.csv", dataset.CSVOptions{Shape: [2]int{8, 8}})
		}, autoencoder.Kind},
		{"one input, one output column named y", func() (*dataset.Dataset, error) {
			return dataset.ReadCSV(bytes.NewReader([]byte("x,y\n0,1\n1,2\n2,2\n")), "t.csv", dataset.CSVOptions{})
		}, regression.Kind},
		{"outputs only", func() (*dataset.Dataset, error) {
			return dataset.ReadCSV(bytes.NewReader([]byte("y1,y2\n0,1\n1,2\n2,2\n")), "t.csv", dataset.CSVOptions{})
		}, autoencoder.Kind},
	} {
		ds, err := c.ds()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := Kind(ds); got != c.want {
			t.Errorf("%s: view %q, want %q", c.name, got, c.want)
		}
	}
	loop, _ := dataset.LoadCSV("../../examples/loop.csv", dataset.CSVOptions{})
	if loop.Truth == nil || loop.XTest == nil {
		t.Errorf("examples/loop.csv: ground truth %v, a test split %v; the README promises both", loop.Truth != nil, loop.XTest != nil)
	}
}

// TestExamplesRegenerate: examples/ is what scripts/make-examples.py
// writes, byte for byte (examples/README.md says so).
func TestExamplesRegenerate(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to run scripts/make-examples.py")
	}
	dir := t.TempDir()
	if out, err := exec.Command(py, "../../scripts/make-examples.py", dir).CombinedOutput(); err != nil {
		t.Fatalf("make-examples.py: %v\n%s", err, out)
	}
	for _, f := range []string{"loop.csv", "spot.csv"} {
		got, err1 := os.ReadFile(filepath.Join(dir, f))
		want, err2 := os.ReadFile(filepath.Join("../../examples", f))
		if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: regenerated %d bytes (%v), committed %d (%v): not the same", f, len(got), err1, len(want), err2)
		}
	}
}
