package montecarlo

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/plotkit"
	"dgpviz/internal/plotkit/plotkittest"

	"gonum.org/v1/plot/cmpimg"
)

// TestMessageFigure checks the figure data of the step model against the
// exact quantities: the MC moments agree with the true mean and variance,
// the message is the engine's, and everything encodes to JSON.
func TestMessageFigure(t *testing.T) {
	m := engine.StepModel(12)
	ins := []GaussianInput{{-0.5, 0.01}, {0, 0.04}, {1.6, 0.01}, {0, 0.5}}
	fd, err := MessageFigure(m, 0, ins, 20000, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(fd.Inputs) != 4 || len(fd.Inducing) != 12 || len(fd.GP.X) != GPGridPoints {
		t.Fatalf("figure has %d inputs, %d inducing bars, %d GP points", len(fd.Inputs), len(fd.Inducing), len(fd.GP.X))
	}
	z := &zScores{t: t}
	for i, r := range fd.Inputs {
		z.check("mean", r.MC.Mean, r.True.Mean, r.MC.MeanSE)
		z.check("var", r.MC.Var, r.True.Var, r.MC.VarSE)
		// 1e-12: the true variance is the message's plus the penalties.
		if want := r.Message.Var + 2*fd.NoiseVariance*(r.Compression+r.Propagation); math.Abs(r.True.Var-want) > 1e-12 {
			t.Errorf("input %d: true var %v, want %v", i, r.True.Var, want)
		}
		if r.Distance.W1 < 0 || r.Distance.KL < 0 || r.Distance.W1SE <= 0 {
			t.Errorf("input %d: distance %+v", i, r.Distance)
		}
	}
	// The wide input across the bend is far less Gaussian than the narrow
	// one on the flat part: larger propagation term and W1.
	if !(fd.Inputs[3].Propagation > 10*fd.Inputs[0].Propagation && fd.Inputs[3].Distance.W1 > fd.Inputs[0].Distance.W1+4*fd.Inputs[3].Distance.W1SE) {
		t.Errorf("wide input: propagation %v, W1 %v; narrow: %v, %v", fd.Inputs[3].Propagation, fd.Inputs[3].Distance.W1, fd.Inputs[0].Propagation, fd.Inputs[0].Distance.W1)
	}
	// Outside the inducing inputs the compression term is larger.
	if !(fd.Inputs[2].Compression > 10*fd.Inputs[0].Compression) {
		t.Errorf("far input compression %v, near %v", fd.Inputs[2].Compression, fd.Inputs[0].Compression)
	}
	if _, err := json.Marshal(fd); err != nil {
		t.Errorf("JSON: %v", err)
	}
	// Reproducible.
	again, err := MessageFigure(m, 0, ins, 20000, 7)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fd)
	b, _ := json.Marshal(again)
	if !bytes.Equal(a, b) {
		t.Errorf("same seed, different figure data")
	}
}

// TestMessageFigureDeepLayer checks the figure for the second layer of a
// model against the engine's message at a Gaussian input equal to layer
// 0's message for one datum.
func TestMessageFigureDeepLayer(t *testing.T) {
	m := engine.RandomModel(rand.New(rand.NewPCG(4, 4)), 5, []int{1, 1, 1}, []string{"rbf", "rbf"}, 8)
	res, _, err := engine.Evaluate(m, engine.Options{OutputVariance: true})
	if err != nil {
		t.Fatal(err)
	}
	in := GaussianInput{res.Messages[0].Mean.At(2, 0), res.Messages[0].Var.At(2, 0)}
	fd, err := MessageFigure(m, 1, []GaussianInput{in}, 1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := fd.Inputs[0]
	// 1e-9 relative: the same formulas in another order.
	for _, c := range [][2]float64{
		{r.Message.Mean, res.Messages[1].Mean.At(2, 0)},
		{r.Message.Var, res.Messages[1].Var.At(2, 0)},
		{r.Compression, res.Layers[1].CompressionPerDatum[2]},
		{r.Propagation, res.Layers[1].PropagationPerDatum[2]},
	} {
		if math.Abs(c[0]-c[1]) > 1e-9*math.Max(1, math.Abs(c[1])) {
			t.Errorf("figure %v, engine %v", c[0], c[1])
		}
	}
}

// TestBadFigureRequests checks that bad requests get clear errors.
func TestBadFigureRequests(t *testing.T) {
	m := engine.StepModel(6)
	multi := engine.RandomModel(rand.New(rand.NewPCG(1, 1)), 4, []int{1, 2, 1}, []string{"rbf", "rbf"}, 4)
	ok := []GaussianInput{{0, 0.1}}
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"layer too large", func() error { _, err := MessageFigure(m, 1, ok, 100, 1); return err }, "out of range"},
		{"negative layer", func() error { _, err := MessageFigure(m, -1, ok, 100, 1); return err }, "out of range"},
		{"multi-D layer", func() error { _, err := MessageFigure(multi, 0, ok, 100, 1); return err }, "needs 1 and 1"},
		{"no inputs", func() error { _, err := MessageFigure(m, 0, nil, 100, 1); return err }, "0 inputs"},
		{"too many inputs", func() error {
			_, err := MessageFigure(m, 0, make([]GaussianInput, MaxFigureInputs+1), 100, 1)
			return err
		}, "inputs"},
		{"zero width", func() error { _, err := MessageFigure(m, 0, []GaussianInput{{0, 0}}, 100, 1); return err }, "variance"},
		{"negative width", func() error { _, err := MessageFigure(m, 0, []GaussianInput{{0, -1}}, 100, 1); return err }, "variance"},
		{"infinite mean", func() error { _, err := MessageFigure(m, 0, []GaussianInput{{math.Inf(1), 1}}, 100, 1); return err }, "mean"},
		{"one sample", func() error { _, err := MessageFigure(m, 0, ok, 1, 1); return err }, "samples"},
		{"absurd samples", func() error { _, err := MessageFigure(m, 0, ok, 1<<40, 1); return err }, "samples"},
		{"nil model", func() error { _, err := MessageFigure(nil, 0, ok, 100, 1); return err }, "nil model"},
		{"presets multi-D", func() error { _, err := InputSets(multi, 1); return err }, "needs 1 and 1"},
		{"presets range", func() error { _, err := InputSets(m, 3); return err }, "out of range"},
		{"render format", func() error {
			return RenderMessageFigure(new(bytes.Buffer), "gif", &FigureData{Inputs: make([]InputResponse, 1), GP: plotkit.Curve{X: []float64{0, 1}}})
		}, "format"},
		{"render nil", func() error { return RenderMessageFigure(new(bytes.Buffer), "png", nil) }, "needs"},
	} {
		err := tc.run()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.HasPrefix(err.Error(), "montecarlo: ") {
			t.Errorf("%s: error %v, want one without a package prefix mentioning %q", tc.name, err, tc.want)
		}
	}
}

// TestPresets checks that each preset shows what its name says on the
// step model, whose function bends at 0 and whose inducing inputs span
// [−1, 1].
func TestPresets(t *testing.T) {
	m := engine.StepModel(12)
	ps, err := InputSets(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range InputSetNames() {
		if len(ps[name]) != 4 {
			t.Fatalf("preset %q has %d inputs", name, len(ps[name]))
		}
		for _, in := range ps[name] {
			if !(in.Var > 0) || math.IsNaN(in.Mean) {
				t.Errorf("preset %q: bad input %+v", name, in)
			}
		}
	}
	l := mustLayer(t, m.Layers[0], m.Jitter)
	terms := func(in GaussianInput) *InputTerms {
		tm, err := l.Terms([]float64{in.Mean}, []float64{in.Var})
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	// Far: the compression term rises input by input, and the last input
	// is outside the inducing inputs.
	far := ps[InputSetFar]
	for i := 1; i < 4; i++ {
		if terms(far[i]).Compression <= terms(far[i-1]).Compression {
			t.Errorf("far preset: compression does not rise at input %d: %+v", i, far)
		}
	}
	if math.Abs(far[3].Mean) <= 1 {
		t.Errorf("far preset's last input %v is inside the inducing inputs", far[3].Mean)
	}
	// Bend: the main bend of tanh(6x) is at 0 (within a lengthscale/4).
	if b := ps[InputSetBend][0]; math.Abs(b.Mean) > 0.3/4 {
		t.Errorf("bend preset's first input at %v, want near 0", b.Mean)
	}
	// Well represented: every input has smaller terms than the bend's.
	tb := terms(ps[InputSetBend][0])
	for _, in := range ps[InputSetWell] {
		tw := terms(in)
		if tw.Compression+tw.Propagation >= tb.Compression+tb.Propagation {
			t.Errorf("well-represented input %+v has terms %v+%v ≥ the bend's %v+%v", in, tw.Compression, tw.Propagation, tb.Compression, tb.Propagation)
		}
	}
	if _, err := json.Marshal(ps); err != nil {
		t.Error(err)
	}
}

// checkGolden compares got with testdata/name, or rewrites it with -regen
// (cmpimg's flag). PNGs are compared with cmpimg.EqualApprox's tolerance
// 0.05, so that small rasterisation and rounding differences between
// platforms pass.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *cmpimg.GenerateTestData {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -regen to create it)", err)
	}
	ok, err := cmpimg.EqualApprox(strings.TrimPrefix(filepath.Ext(name), "."), got, want, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		bad := filepath.Join(t.TempDir(), name)
		os.WriteFile(bad, got, 0o644)
		t.Errorf("%s differs from the golden image; got written to %s", name, bad)
	}
}

// TestRenderGolden renders the message figure of the step model and
// compares it with a golden PNG. SVG and PDF are checked for their headers only, since
// they embed fonts and are compared byte for byte by cmpimg.
func TestRenderGolden(t *testing.T) {
	m := engine.StepModel(12)
	ps, err := InputSets(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := MessageFigure(m, 0, ps[InputSetPaper], 20000, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ format, prefix string }{{"png", "\x89PNG"}, {"svg", "<?xml"}, {"pdf", "%PDF"}} {
		var buf bytes.Buffer
		if err := RenderMessageFigure(&buf, f.format, fd); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(buf.Bytes(), []byte(f.prefix)) {
			t.Errorf("%s: output starts %q", f.format, buf.Bytes()[:min(10, buf.Len())])
		}
		if f.format == "png" {
			checkGolden(t, "messages_golden.png", buf.Bytes())
		}
		// Each response's terms print as drawn, W₁ included, the
		// penalties in nats (as the page's captions).
		if f.format == "pdf" {
			text := plotkittest.PDFText(t, buf.Bytes())
			if strings.Count(text, "W₁") != len(fd.Inputs) {
				t.Errorf("the PDF prints W₁ %d times, want %d (one per input): %q", strings.Count(text, "W₁"), len(fd.Inputs), text)
			}
			if strings.Count(text, "nats") < 2*len(fd.Inputs) {
				t.Errorf("the PDF says nats %d times, want at least %d (both penalties of every input): %q", strings.Count(text, "nats"), 2*len(fd.Inputs), text)
			}
		}
	}

}

// TestToOriginal: on a one-layer model both axes go to original units — x
// by norm_x, y by norm_y (affine maps; densities scale by 1/a so they still
// integrate to 1) — and on a hidden layer of a deeper model neither does.
func TestToOriginal(t *testing.T) {
	m := engine.StepModel(8)
	nx := dataset.Normalizer{Mean: []float64{10}, Scale: []float64{2}}
	ny := dataset.Normalizer{Mean: []float64{-1}, Scale: []float64{3}}
	raw, err := MessageFigure(m, 0, []GaussianInput{{Mean: 0.2, Var: 0.01}}, 2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	fd, _ := MessageFigure(m, 0, []GaussianInput{{Mean: 0.2, Var: 0.01}}, 2000, 1)
	fd.ToOriginal(nx, ny, 1, "s", "dBm")
	for i := range raw.GP.X {
		// 1e-12: one multiply-add.
		if math.Abs(fd.GP.X[i]-(raw.GP.X[i]*2+10)) > 1e-12 || math.Abs(fd.GP.Mean[i]-(raw.GP.Mean[i]*3-1)) > 1e-12 || math.Abs(fd.GP.SD[i]-raw.GP.SD[i]*3) > 1e-12 {
			t.Fatalf("grid %d: (%v, %v ± %v) from (%v, %v ± %v)", i, fd.GP.X[i], fd.GP.Mean[i], fd.GP.SD[i], raw.GP.X[i], raw.GP.Mean[i], raw.GP.SD[i])
		}
	}
	r, r0 := fd.Inputs[0], raw.Inputs[0]
	if math.Abs(r.Input.Mean-(0.2*2+10)) > 1e-12 || math.Abs(r.Input.Var-0.04) > 1e-12 {
		t.Errorf("input %+v", r.Input)
	}
	if math.Abs(r.Message.Mean-(r0.Message.Mean*3-1)) > 1e-12 || math.Abs(r.Message.Var-r0.Message.Var*9) > 1e-12 {
		t.Errorf("message %+v from %+v", r.Message, r0.Message)
	}
	var mass float64 // the density still integrates to 1 (trapezoid)
	for k := 1; k < len(r.Density.X); k++ {
		mass += (r.Density.X[k] - r.Density.X[k-1]) * (r.Density.P[k] + r.Density.P[k-1]) / 2
	}
	if math.Abs(mass-1) > 0.02 {
		t.Errorf("density mass %v after the change of units", mass)
	}
	hidden, _ := MessageFigure(m, 0, []GaussianInput{{Mean: 0.2, Var: 0.01}}, 2000, 1)
	hidden.Layer = 1 // as if the middle layer of three: no units either side
	hidden.ToOriginal(nx, ny, 3, "s", "dBm")
	if hidden.GP.X[0] != raw.GP.X[0] || hidden.GP.Mean[0] != raw.GP.Mean[0] {
		t.Error("a hidden layer was converted")
	}
	if hidden.InputUnit != "" || hidden.OutputUnit != "" {
		t.Errorf("a hidden layer's axes in %q and %q", hidden.InputUnit, hidden.OutputUnit)
	}
	// The converted axes say their units.
	var svg bytes.Buffer
	if err := RenderMessageFigure(&svg, "svg", fd); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">input (s)<", ">output (dBm)<"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("the message figure has no axis %s", want)
		}
	}
}
