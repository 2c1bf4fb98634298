package train

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/latent"

	"gonum.org/v1/gonum/mat"
)

// TestRobotPresetClosesTheLoop fits the robot preset on the real data with a
// fixed seed: the first hidden layer's geometry score must beat a time-only
// latent by a wide margin.
func TestRobotPresetClosesTheLoop(t *testing.T) {
	path, _ := filepath.Abs("../../../shared/data/robot_wireless/uw-floor.txt")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared data not found at %s: skipping the real-data test", path)
	}
	if testing.Short() {
		t.Skip("fits for several seconds")
	}
	ds, err := dataset.LoadRobot(path)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := ds.X.Dims()
	x, y := dataset.FitNormalizer(ds.X).Apply(ds.X), dataset.FitNormalizer(ds.Y).Apply(ds.Y)
	pos := mat.DenseCopyOf(ds.Truth.Slice(0, n, 0, 2))
	p := RobotPreset(1)
	m, reps, err := p.Start(context.Background(), x, y, TrainerConfig{Workers: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reps {
		t.Logf("restart %d (init %s, perturb %g): bound %.1f", r.Restart, r.Init.HiddenInit, r.Init.Perturb, r.Report.Bound)
	}
	fm, rep, err := Fit(context.Background(), m, p.Trainer(TrainerConfig{Workers: 2}), FitOptions{MaxIters: 300})
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := engine.Evaluate(fm, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	score := func(a mat.Matrix) float64 {
		s, err := latent.LoopClosure(a, pos, latent.RuleFor(pos))
		if err != nil {
			t.Fatal(err)
		}
		return s.Value
	}
	l1, l2, timeOnly := score(res.Messages[0].Mean), score(res.Messages[1].Mean), score(latent.TimeFeatures(n, 3))
	t.Logf("robot preset (seed 1, %d iterations, bound %.1f): layer 1 %.3f, layer 2 %.3f, time only %.3f", rep.Iters, rep.Bound, l1, l2, timeOnly)
	if l1 < 0.9 || l1-timeOnly < 0.5 {
		t.Errorf("first hidden layer scores %.3f, time-only %.3f: want ≥ 0.9 and a margin ≥ 0.5", l1, timeOnly)
	}
}
