package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"dgpviz/internal/modelfile"
	"dgpviz/internal/train"

	"gonum.org/v1/gonum/mat"
)

// fitStep runs `viz fit` on the step data with small settings (a quick fit,
// not a converged one) into dir/name and returns the file's bytes and stderr.
func fitStep(t *testing.T, dir, name string, extra ...string) ([]byte, string) {
	t.Helper()
	out := filepath.Join(dir, name)
	args := append([]string{"fit", "-data", "step", "-hidden", "1", "-inducing", "8", "-iters", "80", "-seed", "3", "-restarts", "2", "-out", out}, extra...)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("viz %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b, stderr.String()
}

// TestFitReproducible checks that the same seed and flags give the same
// model file byte for byte, that `viz eval` reproduces the recorded bound
// exactly, and that the file records normalisation, data set and
// initialisation.
func TestFitReproducible(t *testing.T) {
	dir := t.TempDir()
	a, stderr := fitStep(t, dir, "a.json")
	b, _ := fitStep(t, dir, "b.json", "-workers", "1")
	if !bytes.Equal(a, b) {
		t.Fatal("two fits with the same seed and flags wrote different files")
	}
	if !strings.Contains(stderr, "bound") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	mf, err := modelfile.ReadFile(filepath.Join(dir, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fit fitJSON
	if err := json.Unmarshal(mf.Extra["fit"], &fit); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"eval", "-model", filepath.Join(dir, "a.json")}, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var ev evalJSON
	if err := json.Unmarshal(stdout.Bytes(), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Bound != fit.Bound {
		t.Errorf("viz eval bound %v, fit recorded %v", ev.Bound, fit.Bound)
	}
	for _, k := range []string{"dataset", "init"} {
		if _, ok := mf.Extra[k]; !ok {
			t.Errorf("model file lacks %q", k)
		}
	}
	// The step inputs are i/29, i = 0…29: mean 0.5.
	if xm := mf.NormX.Mean; len(xm) != 1 || xm[0] < 0.5-1e-12 || xm[0] > 0.5+1e-12 {
		t.Errorf("the normalisation's x mean is %v, want [0.5]", xm)
	}
	c, _ := fitStep(t, dir, "c.json", "-seed", "4")
	if bytes.Equal(a, c) {
		t.Error("a different seed gave the same file")
	}
}

// TestFitFreeze checks that -freeze keeps the inducing inputs at their
// initial values: a fit with -iters 1 and one with -iters 80 share them.
func TestFitFreeze(t *testing.T) {
	dir := t.TempDir()
	fitStep(t, dir, "a.json", "-freeze", "inducing", "-restarts", "1")
	fitStep(t, dir, "b.json", "-freeze", "inducing", "-restarts", "1", "-iters", "1")
	ma, err := modelfile.ReadFile(filepath.Join(dir, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	mb, err := modelfile.ReadFile(filepath.Join(dir, "b.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range ma.Model.Layers {
		za, zb := ma.Model.Layers[i].InducingInputs, mb.Model.Layers[i].InducingInputs
		if !equalDense(za, zb) {
			t.Errorf("layer %d: frozen inducing inputs differ between 1 and 80 iterations", i)
		}
	}
	if equalDense(ma.Model.Layers[0].QMu, mb.Model.Layers[0].QMu) {
		t.Error("q_mu did not move")
	}
}

func equalDense(a, b interface {
	Dims() (int, int)
	At(int, int) float64
}) bool {
	r, c := a.Dims()
	if r2, c2 := b.Dims(); r != r2 || c != c2 {
		return false
	}
	for i := range r {
		for j := range c {
			if a.At(i, j) != b.At(i, j) {
				return false
			}
		}
	}
	return true
}

// TestFitBadInput checks that bad flags are usage errors (exit status 2).
func TestFitBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"-hidden", "1,x"},
		{"-hidden", "0"},
		{"-freeze", "weights"},
		{"-optimizer", "sgd"},
		{"-restarts", "0"},
		{"-iters", "0"},
		{"-lr", "-1"},
		{"-kernel", "matern"},
		{"-hidden-init", "random"},
		{"-inducing", "0"},
		{"-hidden-noise", "0"},
		{"-data", "nope:x"},
		{"-fit", "sometimes"},
		{"-fit", "full", "-optimizer", "svi"},
		{"-fit", "stochastic", "-optimizer", "lbfgs"},
		{"-max-rows", "-1"},
		{"extra"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"fit"}, args...), &stdout, &stderr)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("viz fit %v: error %v, want a usage error", args, err)
		}
	}
}

// TestFitMaxRows: -max-rows refuses a longer file as it is read, and the
// message names the flag.
func TestFitMaxRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.csv")
	if err := os.WriteFile(path, []byte("x,y\n"+strings.Repeat("1,2\n", 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"fit", "-data", path, "-max-rows", "10", "-quiet"}, io.Discard, io.Discard)
	var ue usageError
	if want := "line 12: more data rows than the limit of 10 rows (-max-rows raises it)"; !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want a usage error with %q", err, want)
	}
}

// TestFitOneRow: a one-row CSV is refused by the rule the page follows
// (TestDataUpload), with the count in words, and two rows are fitted with
// a warning that counts them.
func TestFitOneRow(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one.csv"), filepath.Join(dir, "two.csv")
	if err := os.WriteFile(one, []byte("x [s],y [dBm]\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(two, []byte("x [s],y [dBm]\n1,2\n2,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"fit", "-data", one, "-quiet"}, io.Discard, io.Discard)
	var ue usageError
	if want := "one.csv: 1 training row: a fit needs at least 2"; !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
		t.Errorf("one row: err = %v, want a usage error with %q", err, want)
	}
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"fit", "-data", two, "-hidden", "", "-inducing", "2", "-iters", "3", "-out", filepath.Join(dir, "two.json")}, io.Discard, &stderr); err != nil {
		t.Fatalf("two rows: %v\n%s", err, stderr.String())
	}
	if want := "has only 2 rows: a fit to so few points says little"; !strings.Contains(stderr.String(), want) {
		t.Errorf("two rows: stderr %q, want %q", stderr.String(), want)
	}
}

// TestFitAdamStdout fits with minibatch Adam and writes the model to
// standard output.
func TestFitAdamStdout(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"fit", "-optimizer", "adam", "-lr", "0.02", "-batch", "10", "-iters", "50", "-inducing", "6", "-quiet"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("-quiet wrote to stderr: %q", stderr.String())
	}
	mf, err := modelfile.Read(&stdout)
	if err != nil {
		t.Fatal(err)
	}
	var fit fitJSON
	if err := json.Unmarshal(mf.Extra["fit"], &fit); err != nil {
		t.Fatal(err)
	}
	if fit.Optimizer.Method != (train.Adam{}) || fit.BatchSize != 10 || fit.Iters != 50 {
		t.Errorf("fit record %+v", fit)
	}
}

// TestFitStochastic: -fit stochastic fits by svi in minibatches of -batch
// rows; its progress lines and last line say so, with the epochs, and why
// it stopped; the model file records it, byte for byte the same again. At 200 rows auto
// chooses the full batch.
func TestFitStochastic(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"fit", "-fit", "stochastic", "-batch", "10", "-iters", "120", "-window", "20", "-inducing", "6", "-hidden", "1"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	log := stderr.String()
	for _, want := range []string{"after 120 iterations of a stochastic fit (minibatches of 10 rows, ", " epochs) (the bound may still rise)", ", stochastic, "} {
		if !strings.Contains(log, want) {
			t.Errorf("viz fit -fit stochastic's output lacks %q:\n%s", want, log)
		}
	}
	first := append([]byte(nil), stdout.Bytes()...)
	var again bytes.Buffer
	if err := run(context.Background(), append(args, "-quiet"), &again, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again.Bytes()) {
		t.Error("the same flags gave another model file")
	}
	mf, err := modelfile.Read(&stdout)
	if err != nil {
		t.Fatal(err)
	}
	var fit fitJSON
	if err := json.Unmarshal(mf.Extra["fit"], &fit); err != nil {
		t.Fatal(err)
	}
	if fit.Optimizer.Method != (train.SVI{}) || fit.BatchSize != 10 || fit.Iters != 120 || !(fit.Epochs > 20) || fit.FinalQ != "parameters" {
		t.Errorf("fit record %+v", fit)
	}
	x := mat.NewDense(200, 1, nil)
	if m, err := fitMethod("auto", train.LBFGS{}, false, x); err != nil || m != (train.LBFGS{}) {
		t.Errorf("auto at 200 rows: %v, %v; want lbfgs", m, err)
	}
	if m, err := fitMethod("auto", train.LBFGS{}, false, mat.NewDense(train.StochasticRows+1, 1, nil)); err != nil || m != (train.SVI{}) {
		t.Errorf("auto above StochasticRows: %v, %v; want svi", m, err)
	}
}

// TestFitInterruptedWritesBestSoFar: a fit whose context is cancelled
// (Ctrl-C) still writes the best model reached, and says it stopped early.
func TestFitInterruptedWritesBestSoFar(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m.json")
	ctx, cancel := context.WithCancel(context.Background())
	var errb bytes.Buffer
	steps := 0
	w := writerFunc(func(p []byte) (int, error) {
		// The first progress line reaches stderr once the fit runs: cancel then.
		steps++
		if steps == 1 {
			cancel()
		}
		return errb.Write(p)
	})
	err := run(ctx, []string{"fit", "-data", "step", "-hidden", "1", "-inducing", "8", "-iters", "100000", "-out", out}, &bytes.Buffer{}, w)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err %v, want an interruption error", err)
	}
	if _, err := modelfile.ReadFile(out); err != nil {
		t.Fatalf("no usable model written: %v", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// writeCSV writes a CSV data set with a header row into dir: n rows,
// q inputs x1… and the outputs y1… given by out(x).
func writeCSV(t *testing.T, dir, name string, n, q int, out func(x []float64) []float64) string {
	t.Helper()
	var b strings.Builder
	x := make([]float64, q)
	for i := range n {
		for j := range q {
			x[j] = math.Sin(float64(i*(j+1))*0.37) + float64(i)/float64(n)
		}
		y := out(x)
		if i == 0 {
			var h []string
			for j := range q {
				h = append(h, fmt.Sprintf("x%d", j+1))
			}
			for j := range y {
				h = append(h, fmt.Sprintf("y%d", j+1))
			}
			b.WriteString(strings.Join(h, ",") + "\n")
		}
		var row []string
		for _, v := range append(append([]float64(nil), x...), y...) {
			row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
		}
		b.WriteString(strings.Join(row, ",") + "\n")
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFitPresetByShape: the presets are the defaults of the data shapes
// they fit, never of a data set's name: one input and several outputs
// fits the robot preset (its restart selection, then the chosen restart),
// outputs equal to the inputs the Frey preset; -hidden or -inducing make
// it a model of one's own with the preset's other defaults; -preset names
// one; other shapes have none.
func TestFitPresetByShape(t *testing.T) {
	dir := t.TempDir()
	walk := writeCSV(t, dir, "walk.csv", 40, 1, func(x []float64) []float64 {
		return []float64{math.Sin(3 * x[0]), math.Cos(2 * x[0]), x[0] * x[0]}
	})
	auto := writeCSV(t, dir, "auto.csv", 40, 3, func(x []float64) []float64 { return append([]float64(nil), x...) })
	type rec struct {
		Init struct {
			train.InitConfig
			Preset   *presetJSON `json:"preset"`
			Restarts int         `json:"restarts"`
		} `json:"init"`
	}
	fit := func(args ...string) (rec, string) {
		t.Helper()
		out := filepath.Join(dir, "m.json")
		var stderr bytes.Buffer
		all := append([]string{"fit", "-iters", "30", "-window", "10", "-out", out}, args...)
		if err := run(context.Background(), all, &bytes.Buffer{}, &stderr); err != nil {
			t.Fatalf("viz %v: %v\n%s", all, err, stderr.String())
		}
		mf, err := modelfile.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var r rec
		if err := json.Unmarshal(mf.Extra["init"], &r.Init); err != nil {
			t.Fatal(err)
		}
		return r, stderr.String()
	}
	robot, frey := train.RobotPreset(1), train.FreyPreset(1)
	for _, tc := range []struct {
		args     []string
		preset   string // "" none
		hidden   []int
		inducing int
		input    string
	}{
		{[]string{"-data", "csv:" + walk}, robot.Name, []int{3, 3}, train.RobotInducing, ""},
		{[]string{"-data", "csv:" + auto}, frey.Name, []int{2}, train.FreyInducing, frey.Init.InputKernel},
		{[]string{"-data", "csv:" + auto, "-hidden", "2"}, "", []int{2}, train.FreyInducing, frey.Init.InputKernel},
		{[]string{"-data", "csv:" + walk, "-inducing", "7"}, "", []int{3, 3}, 7, ""},
		{[]string{"-data", "step", "-preset", "robot"}, robot.Name, []int{3, 3}, train.RobotInducing, ""},
		{[]string{"-data", "step", "-preset", "explorer"}, robot.Name, []int{3, 3}, train.RobotInducing, ""},
		{[]string{"-data", "step"}, "", nil, train.DefaultInducing, ""},
	} {
		r, stderr := fit(tc.args...)
		name := ""
		if r.Init.Preset != nil {
			name = r.Init.Preset.Name
		}
		wantOut := 0
		if tc.input == frey.Init.InputKernel && tc.input != "" && !slices.Contains(tc.args, "-inducing") {
			wantOut = train.FreyDecoderInducing
		}
		if r.Init.OutputInducing != wantOut {
			t.Errorf("viz fit %v: %d inducing points in the final layer, want %d (0: as the others)", tc.args, r.Init.OutputInducing, wantOut)
		}
		if name != tc.preset || fmt.Sprint(r.Init.Hidden) != fmt.Sprint(tc.hidden) || r.Init.Inducing != tc.inducing || r.Init.InputKernel != tc.input {
			t.Errorf("viz fit %v: preset %q, hidden %v, inducing %d, input kernel %q; want %q, %v, %d, %q",
				tc.args, name, r.Init.Hidden, r.Init.Inducing, r.Init.InputKernel, tc.preset, tc.hidden, tc.inducing, tc.input)
		}
		if tc.preset != "" && r.Init.Restarts != robot.Restarts && r.Init.Restarts != frey.Restarts {
			t.Errorf("viz fit %v: %d restarts recorded", tc.args, r.Init.Restarts)
		}
		if !strings.Contains(stderr, "over the last") {
			t.Errorf("viz fit %v: stderr does not say how far the bound moved in the last stretch:\n%s", tc.args, stderr)
		}
	}
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"fit", "-preset", "mnist"}, &bytes.Buffer{}, &stderr)
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "want explorer (one input, several outputs) or autoencoder") {
		t.Errorf("-preset mnist: %v, want a usage error naming the presets", err)
	}
}

// TestFitsLastLines: viz fit's closing lines never seem to disagree. A fit
// that stopped by the rule reports the rise below its limit; one that
// stopped otherwise while the rule still expected a rise says it stopped
// first. Restarts name their start in the page's words.
func TestFitsLastLines(t *testing.T) {
	cfg := train.TrainerConfig{Window: 100, Horizon: 1000, TolAbs: 0.01, Tol: 1e-6}
	for _, c := range []struct {
		name string
		r    train.FitReport
		want string // "" : no note that it stopped first
	}{
		// 0.00994 expected is below max(0.01, 1e-6·0.757) = 0.01: the rule.
		{"rule", train.FitReport{Bound: -0.757, Status: train.FunctionConvergence, Rise: 0.000994, Expected: 0.00994, Limit: 0.01}, ""},
		// The robot seed 4 fit: 0.342 expected, above max(0.01, 1e-6·5037) = 0.01.
		{"stationary first", train.FitReport{Bound: -5037.44, Status: train.Stationary, Rise: 0.0342, Expected: 0.342, Limit: 0.01}, "it stopped by stationary first"},
		// Stationary with a rise the rule would also have stopped at: nothing to add.
		{"stationary and flat", train.FitReport{Bound: -5037.44, Status: train.Stationary, Rise: 0.0001, Expected: 0.001, Limit: 0.01}, ""},
		// Exactly at the limit the rule counts the rise as negligible (TrainerConfig.RuleLimit).
		{"stationary at the limit", train.FitReport{Bound: -5037.44, Status: train.Stationary, Rise: 0.001, Expected: 0.01, Limit: 0.01}, ""},
	} {
		line := riseLine(c.r, cfg, 100)
		if !strings.Contains(line, "the rule stops below 0.01)") {
			t.Errorf("%s: %q does not give the rule's limit", c.name, line)
		}
		if has := strings.Contains(line, "first"); has != (c.want != "") || (has && !strings.Contains(line, c.want)) {
			t.Errorf("%s: %q, want the note %q", c.name, line, c.want)
		}
	}

	x := mat.NewDense(3, 1, []float64{0, 1, 2})
	for _, c := range []struct {
		cfg  train.InitConfig
		want string
	}{
		{train.InitConfig{Seed: 4}, "seed 4"},
		{train.InitConfig{Seed: 4, Hidden: []int{3, 3}, HiddenInit: "auto"}, "seed 4, h1 started from principal components of the outputs"},
		{train.InitConfig{Seed: 5, Hidden: []int{3, 3}, HiddenInit: "linear"}, "seed 5, h1 started from the input"},
		{train.InitConfig{Seed: 1, Hidden: []int{1, 1}, HiddenInit: "auto"}, "seed 1, h1 started from the input"},
	} {
		if got := restartStart(c.cfg, x); got != c.want {
			t.Errorf("restartStart(%+v) = %q, want %q", c.cfg, got, c.want)
		}
	}
}

// TestFitItersCapsWholeFit: -iters caps every iteration of the fit: a
// preset's restart selection takes its share (or none, below two
// iterations per restart), and -restarts share it; the file records the
// whole fit's iterations.
func TestFitItersCapsWholeFit(t *testing.T) {
	dir := t.TempDir()
	walk := writeCSV(t, dir, "walk.csv", 40, 1, func(x []float64) []float64 {
		return []float64{math.Sin(3 * x[0]), math.Cos(2 * x[0]), x[0] * x[0]}
	})
	for _, tc := range []struct {
		args          []string
		iters         int
		restartIters  int // the preset's restarts' cap (0: no selection)
		restartsTotal int // restarts recorded
	}{
		{[]string{"-data", walk}, 3, 0, 1},
		{[]string{"-data", walk}, 5, 1, 2},
		{[]string{"-data", walk}, 30, 7, 2},
		{[]string{"-data", "step", "-restarts", "3", "-hidden", "1", "-inducing", "8"}, 10, 0, 3},
	} {
		out := filepath.Join(dir, "m.json")
		args := append([]string{"fit", "-iters", fmt.Sprint(tc.iters), "-out", out, "-quiet"}, tc.args...)
		if err := run(context.Background(), args, io.Discard, io.Discard); err != nil {
			t.Fatalf("viz %v: %v", args, err)
		}
		mf, err := modelfile.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Init struct {
				Preset   *presetJSON `json:"preset"`
				Restarts int         `json:"restarts"`
			}
			Fit struct {
				Iters      int `json:"iters"`
				TotalIters int `json:"total_iters"`
				MaxIters   int `json:"max_iters"`
			}
		}
		if json.Unmarshal(mf.Extra["init"], &rec.Init) != nil || json.Unmarshal(mf.Extra["fit"], &rec.Fit) != nil {
			t.Fatal("the model file's init or fit field does not read")
		}
		if rec.Fit.TotalIters < 1 || rec.Fit.TotalIters > tc.iters || rec.Fit.MaxIters != tc.iters || rec.Init.Restarts != tc.restartsTotal {
			t.Errorf("viz %v: %d iterations in all (max_iters %d), %d restarts; want at most %d, %d restarts", args, rec.Fit.TotalIters, rec.Fit.MaxIters, rec.Init.Restarts, tc.iters, tc.restartsTotal)
		}
		if p := rec.Init.Preset; p != nil && (p.RestartIters != tc.restartIters || rec.Init.Restarts*p.RestartIters+rec.Fit.Iters > tc.iters) {
			t.Errorf("viz %v: %d restarts of %d iterations and %d more; want restarts of %d, at most %d in all", args, rec.Init.Restarts, p.RestartIters, rec.Fit.Iters, tc.restartIters, tc.iters)
		}
	}
	var ue usageError
	if err := run(context.Background(), []string{"fit", "-data", "step", "-restarts", "4", "-iters", "3"}, io.Discard, io.Discard); !errors.As(err, &ue) || !strings.Contains(err.Error(), "-iters 3 is fewer than the 4 restarts") {
		t.Errorf("-iters below -restarts: %v", err)
	}
}
