package train

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/latent"

	"gonum.org/v1/gonum/mat"
)

// TestRobotPresetStudy compares choices for the robot preset on the real
// data: inducing points, restarts and fit length, by the bound, the first
// hidden layer's geometry score and the held-out RMSE in dBm. It takes
// minutes: run it with DGPVIZ_ROBOT_STUDY=1 (it logs a table; it asserts
// only that every fit ran).
func TestRobotPresetStudy(t *testing.T) {
	if os.Getenv("DGPVIZ_ROBOT_STUDY") == "" {
		t.Skip("a study of several minutes: set DGPVIZ_ROBOT_STUDY=1 to run it")
	}
	path, _ := filepath.Abs("../../../shared/data/robot_wireless/uw-floor.txt")
	ds, err := dataset.LoadRobot(path)
	if err != nil {
		t.Skipf("robot data: %v", err)
	}
	n, _ := ds.X.Dims()
	nx, ny := dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
	x, y := nx.Apply(ds.X), ny.Apply(ds.Y)
	pos := mat.DenseCopyOf(ds.Truth.Slice(0, n, 0, 2))
	rmse := func(m *engine.Model) float64 { return robotTestRMSE(t, m, ds, nx, ny) }
	for _, tc := range []struct {
		inducing, restarts, restartIters, iters int
	}{
		{20, 3, 25, 1000}, // the preset
		{15, 3, 25, 1000},
		{30, 3, 25, 1000},
		{20, 5, 25, 1000},
		{20, 3, 25, 3000},
	} {
		for _, seed := range []uint64{1, 2, 3} {
			t0 := time.Now()
			p := RobotPreset(seed)
			p.Init.Inducing, p.Restarts, p.RestartIters = tc.inducing, tc.restarts, tc.restartIters
			m, _, err := p.Start(context.Background(), x, y, TrainerConfig{Workers: 2}, nil)
			if err != nil {
				t.Fatal(err)
			}
			fm, rep, err := Fit(context.Background(), m, TrainerConfig{Workers: 2}, FitOptions{MaxIters: tc.iters})
			if err != nil {
				t.Fatal(err)
			}
			res, _, err := engine.Evaluate(fm, engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s, err := latent.LoopClosure(res.Messages[0].Mean, pos, latent.RuleFor(pos))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s seed %d: bound %.1f, geometry h1 %.3f, held-out RMSE %.2f dBm, %d iterations (%v), %.0f s",
				fmt.Sprintf("M=%d restarts=%d×%d iters=%d", tc.inducing, tc.restarts, tc.restartIters, tc.iters),
				seed, rep.Bound, s.Value, rmse(fm), rep.Iters, rep.Status, time.Since(t0).Seconds())
		}
	}
}
