package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFigureMessages renders the message figure in each format, from
// explicit inputs and from a preset.
func TestFigureMessages(t *testing.T) {
	path := writeMCModel(t, mcModel(1, 10), nil)
	dir := t.TempDir()
	for _, tc := range []struct {
		file, prefix string
		extra        []string
	}{
		{"m.svg", "<?xml", []string{"-inputs", "-0.5:0.01, 0:0.04,1.7:0.01,0:0.3"}},
		{"m.png", "\x89PNG", []string{"-preset", "across a bend"}},
		{"m.pdf", "%PDF", nil},
	} {
		out := filepath.Join(dir, tc.file)
		args := append([]string{"figure", "messages", "-model", path, "-samples", "2000", "-o", out}, tc.extra...)
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("%s: %v (%s)", tc.file, err, stderr.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte(tc.prefix)) {
			t.Errorf("%s starts %q", tc.file, b[:min(8, len(b))])
		}
	}
}

// TestFigureFit renders the fit figure for 1- and 2-layer models at once,
// one of them with a normalisation to undo.
func TestFigureFit(t *testing.T) {
	norm := map[string]json.RawMessage{"normalization": json.RawMessage(`{"note":"n","x_mean":[5],"x_scale":[2],"y_mean":[1],"y_scale":[0.5]}`)}
	one := writeMCModel(t, mcModel(1, 8), norm)
	two := writeMCModel(t, mcModel(2, 8), nil)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"figure", "fit", "-model", one, "-model", two, "-format", "png", "-o", "-"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v (%s)", err, stderr.String())
	}
	if !bytes.HasPrefix(stdout.Bytes(), []byte("\x89PNG")) {
		t.Errorf("fit figure is not a PNG")
	}
}

// TestFigureBadInput checks that bad requests exit with status 2 and
// write no file.
func TestFigureBadInput(t *testing.T) {
	dir := t.TempDir()
	path := writeMCModel(t, mcModel(1, 6), nil)
	deep := writeMCModel(t, mcModel(2, 6), nil)
	bad := writeMCModel(t, mcModel(1, 6), map[string]json.RawMessage{"normalization": json.RawMessage(`{"y_scale":[-1]}`)})
	out := filepath.Join(dir, "f.svg")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"figure"}, "want a kind"},
		{[]string{"figure", "bars"}, "unknown kind"},
		{[]string{"figure", "messages", "-o", out}, "required"},
		{[]string{"figure", "messages", "-model", path, "-o", filepath.Join(dir, "f.gif")}, "unknown format"},
		{[]string{"figure", "messages", "-model", path, "-o", out, "-layer", "2"}, "out of range"},
		{[]string{"figure", "messages", "-model", deep, "-o", out, "-layer", "1"}, "needs 1 and 1"},
		{[]string{"figure", "messages", "-model", path, "-o", out, "-inputs", "0:0"}, "variance"},
		{[]string{"figure", "messages", "-model", path, "-o", out, "-inputs", "0:-1,1:1"}, "variance"},
		{[]string{"figure", "messages", "-model", path, "-o", out, "-inputs", "0"}, "mean:variance"},
		{[]string{"figure", "messages", "-model", path, "-o", out, "-inputs", "a:1"}, "mean"},
		{[]string{"figure", "messages", "-model", path, "-o", out, "-preset", "nowhere"}, "unknown preset"},
		{[]string{"figure", "messages", "-model", path, "-o", out, "-samples", "-5"}, "samples"},
		{[]string{"figure", "fit", "-o", out}, "required"},
		{[]string{"figure", "fit", "-model", bad, "-o", out}, "y_scale"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tc.args, &stdout, &stderr)
		var ue usageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want a usage error mentioning %q", tc.args, err, tc.want)
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed request wrote %s", out)
	}
}
