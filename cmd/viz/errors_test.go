package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// forDevelopers finds what an error text for people must not hold: a
// package prefix ("stream: ", "engine: "…), Go's type names and parser
// vocabulary ("is not a int", "invalid character … looking for beginning
// of value", "(MaxRows)"), and numbers counted from 0 where people count
// from 1 ("layers 0…2", "hidden[1]", "layer 0" that the user did not
// write as a flag's value).
var forDevelopers = []*regexp.Regexp{
	regexp.MustCompile(`(^|: )(stream|engine|train|linalg|montecarlo|dataset|latent|faces|fitfigure|plotkit|web|wire|view|relay|explorer|regression|autoencoder|json|strconv): `),
	regexp.MustCompile(`\b(u?int(8|16|32|64)?|float(32|64)|\[\][a-z]\w*|\*?mat\.Dense)\b|invalid character|looking for beginning|cannot unmarshal|\(Max[A-Z]\w*\)|\bnil\b|goroutine|panic|(^|: )(open|read|stat|write) \S+: `),
	regexp.MustCompile(`\b(layers|rows|dimensions|restarts|frames|outputs|inputs|points) 0…|(^|[^-\w])(layer|row|dimension|restart|frame|output) (0|-1)\b|\b(hidden|layers|layer)\[\d`),
}

// checkForPeople reports every part of text that is for developers.
func checkForPeople(t *testing.T, where, text string) {
	t.Helper()
	for _, re := range forDevelopers {
		if m := re.FindString(text); m != "" {
			t.Errorf("%s: %q has %q, which is not for people", where, text, m)
		}
	}
}

// TestErrorsForPeople runs every command with bad input and reads what it
// says: one line for people, without package prefixes, Go's vocabulary or
// numbers counted from 0.
func TestErrorsForPeople(t *testing.T) {
	dir := t.TempDir()
	fitStep(t, dir, "step.json")
	step := filepath.Join(dir, "step.json")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbage := write("garbage.json", "x")
	typed := write("typed.json", `{"jitter": "a"}`)
	fraction := write("fraction.json", `{"layers": 2.5}`)
	truncated := write("truncated.json", `{"data": {"X": [[1`)
	layer := `{"kernel": {"type":"rbf","variance":1,"lengthscales":[1]}, "noise_variance": 1, "inducing_inputs": [[0],[0]], "q_mu": [[0],[0]], "q_sqrt": [[[1,0],[0,1]]]}`
	singular := write("singular.json", `{"jitter": 0, "data": {"X": [[1],[2]], "Y": [[2.5],[3]]}, "layers": [`+layer+`]}`)
	noLayers := write("nolayers.json", `{"data": {"X": [[1],[2]], "Y": [[2.5],[3]]}, "layers": []}`)
	shape := write("shape.json", `{"data": {"X": [[1],[2]], "Y": [[2.5],[3]], "shape": [2, 2]}, "layers": [`+layer+`]}`)
	loop := "csv:" + writeLoopCSV(t, dir)
	multi := filepath.Join(dir, "multi.json")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"fit", "-data", loop, "-hidden", "2", "-inducing", "6", "-iters", "5", "-quiet", "-out", multi}, &stdout, &stderr); err != nil {
		t.Fatalf("viz fit: %v\n%s", err, stderr.String())
	}
	mat := "../../internal/dataset/testdata/frey_small.mat"
	missing := filepath.Join(dir, "missing.json")
	png := filepath.Join(dir, "x.png")

	cases := [][]string{
		{"nonsense"},
		{"data", "get", "mnist"},
		{"data", "get"},
		{"predict"},
		{"predict", "-model", missing},
		{"predict", "-model", garbage},
		{"predict", "-model", typed},
		{"predict", "-model", fraction},
		{"predict", "-model", truncated},
		{"predict", "-model", noLayers},
		{"predict", "-model", shape},
		{"predict", "-model", singular},
		{"predict", "-model", step, "-x", "1,a"},
		{"predict", "-model", step, "-in", missing},
		{"predict", "-model", multi, "-x", "1", "-format", "xml"},
		{"eval", "-model", singular},
		{"eval", "-model", garbage},
		{"mc", "-model", step, "-layer", "0"},
		{"mc", "-model", step, "-layer", "3"},
		{"mc", "-model", step, "-samples", "1"},
		{"mc", "-model", singular},
		{"mc", "-model", step, "-chain", "-samples", "0"},
		{"figure"},
		{"figure", "pie"},
		{"figure", "messages", "-model", step, "-layer", "0", "-o", png},
		{"figure", "messages", "-model", step, "-layer", "9", "-o", png},
		{"figure", "messages", "-model", multi, "-layer", "1", "-o", png},
		{"figure", "messages", "-model", step, "-inputs", "0:-1", "-o", png},
		{"figure", "messages", "-model", step, "-inputs", "1", "-o", png},
		{"figure", "messages", "-model", step, "-units", "dBm", "-o", png},
		{"figure", "messages", "-model", step, "-o", filepath.Join(dir, "x.gif")},
		{"figure", "messages", "-model", singular, "-o", png},
		{"figure", "fit", "-model", multi, "-o", png},
		{"figure", "fit", "-model", step, "-points", "1", "-o", png},
		{"figure", "latent", "-model", step, "-o", png},
		{"figure", "latent", "-model", step, "-data", "step", "-o", png},
		{"figure", "latent", "-model", multi, "-data", "step", "-o", png},
		{"figure", "faces", "-model", step, "-o", png},
		{"figure", "faces", "-model", multi, "-shape", "9x9", "-o", png},
		{"figure", "faces", "-model", multi, "-o", png},
		{"latent"},
		{"latent", "-model", step},
		{"latent", "-model", multi, "-data", "nonsense"},
		{"latent", "-model", multi, "-data", "robot:" + mat},
		{"latent", "-model", multi, "-data", "frey:" + loop[len("csv:"):]},
		{"latent", "-model", multi, "-data", "csv:" + missing},
		{"latent", "-model", multi, "-data", "step"},
		{"latent", "-model", multi, "-format", "xml"},
		{"latent", "-model", multi, "-gp-iters", "-1"},
		{"latent", "-model", multi, "-sample-rows", "1"},
		{"latent", "-model", multi, "-sample-pairs", "0"},
		{"latent", "-model", multi, "-sample-revisits", "1"},
		{"fit", "-data", "step", "-hidden", "abc", "-quiet"},
		{"fit", "-data", "step", "-hidden", "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1", "-quiet"},
		{"fit", "-data", "step", "-inducing", "0", "-quiet"},
		{"fit", "-data", "step", "-optimizer", "sgd", "-quiet"},
		{"fit", "-data", "nonsense", "-quiet"},
		{"fit", "-data", "robot:" + mat, "-quiet"},
		{"fit", "-data", "csv:" + missing, "-quiet"},
		{"serve", "-data", "nonsense"},
		{"serve", "-data", "robot:" + mat},
	}
	for _, args := range cases {
		stdout.Reset()
		stderr.Reset()
		err := run(context.Background(), args, &stdout, &stderr)
		if err == nil {
			t.Errorf("viz %s: accepted", strings.Join(args, " "))
			continue
		}
		var shown bytes.Buffer
		exitCode(err, &shown) // what the terminal shows
		line := strings.TrimSuffix(shown.String(), "\n")
		if strings.Contains(line, "\n") {
			t.Errorf("viz %s: %d lines: %q", strings.Join(args, " "), strings.Count(line, "\n")+1, line)
		}
		checkForPeople(t, "viz "+strings.Join(args, " "), line)
	}
}

// zeroBased finds labels that count layers, dimensions or rows from 0.
var zeroBased = regexp.MustCompile(`\b(layer|layers|dimension|dimensions|dims|row|rows|restart|frame|output|input) (0|-1)\b|\bh0\b|\[0\]|\b0…`)

// TestFigureLabelsCountFrom1 draws the command line's figures and reads
// their titles, axes and colour bars: layers, dimensions and rows are
// counted from 1, as on the page.
func TestFigureLabelsCountFrom1(t *testing.T) {
	dir := t.TempDir()
	fitStep(t, dir, "step.json", "-hidden", "1,1")
	step := filepath.Join(dir, "step.json")
	loop := "csv:" + writeLoopCSV(t, dir)
	multi := filepath.Join(dir, "multi.json")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"fit", "-data", loop, "-hidden", "2,2", "-inducing", "6", "-iters", "5", "-quiet", "-out", multi}, &stdout, &stderr); err != nil {
		t.Fatalf("viz fit: %v\n%s", err, stderr.String())
	}
	text := regexp.MustCompile(`>([^<>]+)</text>`)
	for _, tc := range []struct {
		args []string
		want []string // labels that must be there
	}{
		{[]string{"figure", "messages", "-model", step, "-layer", "2", "-samples", "2000"}, []string{"layer 2"}},
		{[]string{"figure", "messages", "-model", step, "-layer", "1", "-samples", "2000"}, []string{"layer 1"}},
		{[]string{"figure", "fit", "-model", step}, []string{"3 layers"}},
		{[]string{"figure", "latent", "-model", multi, "-data", loop}, []string{"h1: dimensions 1, 2", "h2 dimension 2", "truth_x"}},
	} {
		stdout.Reset()
		args := append(append([]string(nil), tc.args...), "-format", "svg", "-o", "-")
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("viz %s: %v", strings.Join(args, " "), err)
		}
		var labels []string
		for _, m := range text.FindAllStringSubmatch(stdout.String(), -1) {
			labels = append(labels, m[1])
		}
		all := strings.Join(labels, " | ")
		for _, w := range tc.want {
			if !strings.Contains(all, w) {
				t.Errorf("viz %s: no label %q in %q", strings.Join(tc.args[:2], " "), w, all)
			}
		}
		for _, l := range labels {
			if m := zeroBased.FindString(l); m != "" {
				t.Errorf("viz %s: label %q counts from 0 (%q)", strings.Join(tc.args[:2], " "), l, m)
			}
		}
	}
}
