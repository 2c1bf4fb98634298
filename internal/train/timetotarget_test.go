package train

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
	"dgpviz/internal/modelfile"

	"gonum.org/v1/gonum/mat"
)

// TestTimeToTarget is the measurement of docs/measurements.md, "Time to a
// converged model": one fit of a case with a seed, its bound after every
// iteration with the process's CPU time, and the model's quality when the
// bound first reaches a target and at the end. It uses only the API that
// today's build shares with the one before, so that the same file measures
// both (copied into a checkout of the earlier commit, with a presetTrainer
// that returns its configuration); docs/measurements.md has the session's
// commands. By hand:
//
//	DGPVIZ_TTT=robot:1 DGPVIZ_TTT_TARGET=-5000,-4900 DGPVIZ_TTT_OUT=r.json go test -run TestTimeToTarget -timeout 2h ./internal/train/
//
// DGPVIZ_TTT_MAXITERS caps the fit (DefaultMaxIters otherwise), and
// DGPVIZ_TTT_QUALITY_EVERY=k records the quality every k iterations with
// the CPU time so far (the quality's own CPU time not counted), for a
// time to a quality rather than to a bound (robotPresetFor lists the
// robot preset's own knobs). DGPVIZ_TTT_MODEL names a file for the model
// where the fit stopped, and DGPVIZ_TTT_START one to continue from instead
// of the case's start (for where another build's fit stopped);
// DGPVIZ_TTT_EXPLICIT=on optimises the final q(u) as parameters and
// DGPVIZ_TTT_MEMORY sets the L-BFGS correction pairs (the build before's
// optimizer).
//
// Cases: step1, step3 (the step data, one layer or hidden 1,1, 15 inducing
// points, as the README's step table; seeds after the first perturbed by
// DefaultPerturb, as viz fit's restarts), robot (the robot preset:
// Preset.Start, then a fit to its stopping rule) and frey (the Frey preset
// on the frames whose index is not 5 mod 10, the other 10 % held out).
// One evaluator worker: CPU time is the measure.
func TestTimeToTarget(t *testing.T) {
	spec := os.Getenv("DGPVIZ_TTT")
	if spec == "" {
		t.Skip("a measurement: set DGPVIZ_TTT=case:seed (see the comment)")
	}
	name, seedText, _ := strings.Cut(spec, ":")
	seed, err := strconv.ParseUint(seedText, 10, 64)
	if err != nil {
		t.Fatalf("DGPVIZ_TTT=%q: want case:seed", spec)
	}
	var targets []float64
	if v := os.Getenv("DGPVIZ_TTT_TARGET"); v != "" {
		for _, f := range strings.Split(v, ",") {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			targets = append(targets, x)
		}
	}
	shared, _ := filepath.Abs("../../../shared/data")
	c := tttCase(t, name, seed, shared)
	ctx := context.Background()
	tcfg := TrainerConfig{Workers: 1}
	maxIters := envInt(t, "DGPVIZ_TTT_MAXITERS", DefaultMaxIters)
	qualityEvery := envInt(t, "DGPVIZ_TTT_QUALITY_EVERY", 0)

	out := tttResult{Case: name, Seed: seed, Targets: targets}
	out.TargetCPU = make([]float64, len(targets))
	out.TargetIter = make([]int, len(targets))
	out.AtTarget = make([]map[string]float64, len(targets))
	atTarget := make([]*engine.Model, len(targets))
	cpu0 := cpuSeconds()
	wall0 := time.Now()
	record := func(s StepInfo) {
		out.Iters = append(out.Iters, s.Iter)
		out.Bounds = append(out.Bounds, s.Bound)
		out.CPU = append(out.CPU, cpuSeconds()-cpu0)
	}
	var m *engine.Model
	if p := os.Getenv("DGPVIZ_TTT_START"); p != "" { // continue from a model file's model
		mf, err := modelfile.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m = mf.Model
	} else if c.preset != nil {
		var reps []RestartReport
		m, reps, err = c.preset.Start(ctx, c.x, c.y, tcfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		out.StartCPU = cpuSeconds() - cpu0
		for _, r := range reps {
			out.RestartBounds = append(out.RestartBounds, r.Report.Bound)
		}
	} else {
		// Seeds after the first are perturbed, as FitRestarts's restarts
		// (the step data's 1-D inputs take no random k-means: an
		// unperturbed start is the same for every seed).
		icfg := InitConfig{Hidden: c.hidden, Inducing: 15, Seed: seed}
		if seed > 1 {
			icfg.Perturb = DefaultPerturb
		}
		if m, err = Initialize(c.x, c.y, icfg); err != nil {
			t.Fatal(err)
		}
	}
	if c.preset != nil {
		tcfg = presetTrainer(*c.preset, tcfg)
	}
	if os.Getenv("DGPVIZ_TTT_EXPLICIT") == "on" {
		tcfg.ExplicitFinalQ = true
	}
	if v := envInt(t, "DGPVIZ_TTT_MEMORY", 0); v > 0 {
		old := lbfgsMemory
		lbfgsMemory = v
		t.Cleanup(func() { lbfgsMemory = old })
	}
	tr, err := NewTrainer(m, tcfg)
	if err != nil {
		t.Fatal(err)
	}
	fm, rep, err := tr.Run(ctx, FitOptions{MaxIters: maxIters, Progress: func(s StepInfo) {
		record(s)
		for i, target := range targets {
			if atTarget[i] == nil && s.Bound >= target {
				out.TargetCPU[i] = out.CPU[len(out.CPU)-1]
				out.TargetIter[i] = s.Iter
				atTarget[i] = tr.Model().Clone()
				fmt.Fprintf(os.Stderr, "%s seed %d: target %g reached at iteration %d, %.1f s CPU\n", name, seed, target, s.Iter, out.TargetCPU[i])
			}
		}
		if qualityEvery > 0 && s.Iter%qualityEvery == 0 {
			spent := cpuSeconds()
			q := c.quality(t, tr.Model())
			cpu0 += cpuSeconds() - spent // the clock counts the fit alone
			out.Curve = append(out.Curve, tttPoint{Iter: s.Iter, CPU: out.CPU[len(out.CPU)-1], Bound: s.Bound, Quality: q})
			fmt.Fprintf(os.Stderr, "%s seed %d: iteration %d, %.1f s CPU, bound %.6g, %v\n", name, seed, s.Iter, out.CPU[len(out.CPU)-1], s.Bound, q)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	out.TotalCPU = cpuSeconds() - cpu0
	out.Wall = time.Since(wall0).Seconds()
	out.Bound, out.Status = rep.Bound, rep.Status.String()
	out.End = c.quality(t, fm)
	if p := os.Getenv("DGPVIZ_TTT_MODEL"); p != "" { // the model where the fit stopped
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := modelfile.WriteModel(f, fm, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i, m := range atTarget {
		if m != nil {
			out.AtTarget[i] = c.quality(t, m)
		}
	}
	t.Logf("%s seed %d: bound %.6g after %d iterations (%s), %.1f s CPU (restarts %.1f s); targets %v at %v s; quality %v",
		name, seed, rep.Bound, rep.Iters, rep.Status, out.TotalCPU, out.StartCPU, targets, out.TargetCPU, out.End)
	if p := os.Getenv("DGPVIZ_TTT_OUT"); p != "" {
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type tttResult struct {
	Case          string
	Seed          uint64
	Targets       []float64
	Iters         []int
	Bounds, CPU   []float64
	StartCPU      float64 // the preset's restart selection
	RestartBounds []float64
	TargetCPU     []float64 // per target: when the bound first reached it (0: never)
	TargetIter    []int
	TotalCPU      float64
	Wall          float64
	Bound         float64
	Status        string
	End           map[string]float64
	AtTarget      []map[string]float64
	Curve         []tttPoint // every DGPVIZ_TTT_QUALITY_EVERY iterations
}

type tttPoint struct {
	Iter       int
	CPU, Bound float64
	Quality    map[string]float64
}

// envInt is the integer in the environment variable name, or def.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: want an integer", name, v)
	}
	return n
}

// tttData is a case's data and its quality measure.
type tttData struct {
	x, y    *mat.Dense
	hidden  []int
	preset  *Preset
	quality func(t *testing.T, m *engine.Model) map[string]float64
	// The Frey case's split: the training and held-out frames (original
	// grey levels) and the training frames' numbers.
	ytr, yte *mat.Dense
	train    []int
}

func tttCase(t *testing.T, name string, seed uint64, shared string) tttData {
	switch name {
	case "step1", "step3":
		ds := dataset.Step()
		nx, ny := dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
		c := tttData{x: nx.Apply(ds.X), y: ny.Apply(ds.Y)}
		if name == "step3" {
			c.hidden = []int{1, 1}
		}
		c.quality = func(t *testing.T, m *engine.Model) map[string]float64 {
			w, o := riseOvershoot(t, m, nx, ny)
			return map[string]float64{"rise_width": w, "overshoot": o}
		}
		return c
	case "robot":
		ds, err := dataset.LoadRobot(filepath.Join(shared, "robot_wireless", "uw-floor.txt"))
		if err != nil {
			t.Skipf("robot data: %v", err)
		}
		n, _ := ds.X.Dims()
		nx, ny := dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
		pos := mat.DenseCopyOf(ds.Truth.Slice(0, n, 0, 2))
		p := robotPresetFor(t, seed)
		c := tttData{x: nx.Apply(ds.X), y: ny.Apply(ds.Y), preset: &p}
		c.quality = func(t *testing.T, m *engine.Model) map[string]float64 {
			var ev engine.Evaluator
			train, err := ev.PredictLayers(m, c.x, 1)
			if err != nil {
				t.Fatal(err)
			}
			g, err := latent.LoopClosure(train[0].Mean, pos, latent.RuleFor(pos))
			if err != nil {
				t.Fatal(err)
			}
			return map[string]float64{"test_rmse_dbm": robotTestRMSE(t, m, ds, nx, ny), "geometry": g.Value}
		}
		return c
	case "frey":
		ds, err := dataset.LoadFrey(filepath.Join(shared, "frey_faces", "frey_rawface.mat"))
		if err != nil {
			t.Skipf("Frey data: %v", err)
		}
		ytr, yte, train := freySplit(ds)
		norm := dataset.FitNormalizer(ytr)
		xn := norm.Apply(ytr)
		p := FreyPreset(seed)
		c := tttData{x: xn, y: mat.DenseCopyOf(xn), preset: &p, ytr: ytr, yte: yte, train: train}
		c.quality = func(t *testing.T, m *engine.Model) map[string]float64 {
			var ev engine.Evaluator
			msgs, err := ev.Predict(m, norm.Apply(yte))
			if err != nil {
				t.Fatal(err)
			}
			lat, err := ev.PredictLayers(m, xn, 1)
			if err != nil {
				t.Fatal(err)
			}
			cons, rank := latentOrder(lat[0].Mean, train)
			return map[string]float64{"heldout_rmse": rmse(norm.UndoMean(msgs[len(msgs)-1].Mean), yte), "consecutive_distance": cons, "consecutive_rank": rank}
		}
		return c
	}
	t.Fatalf("unknown case %q: want step1, step3, robot or frey", name)
	return tttData{}
}

// freySplit splits the frames of ds: those whose number is 5 mod 10 are
// held out (yte), the others fitted (ytr, with their numbers train).
func freySplit(ds *dataset.Dataset) (ytr, yte *mat.Dense, train []int) {
	n, d := ds.Y.Dims()
	var test []int
	for i := range n {
		if i%10 == 5 {
			test = append(test, i)
		} else {
			train = append(train, i)
		}
	}
	rows := func(idx []int) *mat.Dense {
		out := mat.NewDense(len(idx), d, nil)
		for r, i := range idx {
			out.SetRow(r, ds.Y.RawRowView(i))
		}
		return out
	}
	return rows(train), rows(test), train
}

// robotTestRMSE is the RMSE in dBm of m's predictions (of data normalised
// by nx, ny) at the robot data's test scans.
func robotTestRMSE(t testing.TB, m *engine.Model, ds *dataset.Dataset, nx, ny dataset.Normalizer) float64 {
	t.Helper()
	var ev engine.Evaluator
	msgs, err := ev.Predict(m, nx.Apply(ds.XTest))
	if err != nil {
		t.Fatal(err)
	}
	pred := ny.UndoMean(msgs[len(msgs)-1].Mean)
	r, c := pred.Dims()
	var s float64
	for i := range r {
		for j := range c {
			e := pred.At(i, j) - ds.YTest.At(i, j) // dBm
			s += e * e
		}
	}
	return math.Sqrt(s / float64(r*c))
}

// latentOrder returns the median latent distance of consecutive frames
// and the median, over frames, of the fraction of the other frames that are
// closer to a frame than its successor in the video (0: the successor is
// the nearest; 0.5: chance): the latent's order by time, which the model
// never sees. frames are the rows' frame numbers.
func latentOrder(lat *mat.Dense, frames []int) (distance, rank float64) {
	n, q := lat.Dims()
	dist := func(a, b int) float64 {
		var s float64
		for j := range q {
			d := lat.At(a, j) - lat.At(b, j)
			s += d * d
		}
		return math.Sqrt(s)
	}
	var ds, rs []float64
	for r := 0; r+1 < n; r++ {
		if frames[r+1] != frames[r]+1 {
			continue
		}
		d := dist(r, r+1)
		ds = append(ds, d)
		closer := 0
		for k := range n {
			if k != r && k != r+1 && dist(r, k) < d {
				closer++
			}
		}
		rs = append(rs, float64(closer)/float64(n-2))
	}
	slices.Sort(ds)
	slices.Sort(rs)
	return ds[len(ds)/2], rs[len(rs)/2]
}

// cpuSeconds is the process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
