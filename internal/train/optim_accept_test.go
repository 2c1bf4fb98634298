package train

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
)

// TestStepAcceptance fits the paper's step data (Hensman & Lawrence, 2014,
// step-function figure) with a one-layer GP and 2- and 3-layer deep GPs
// with one-dimensional hidden layers, 15 inducing points per layer, and
// checks the figure's message: the deep models rise far more sharply,
// overshoot less and have better bounds.
func TestStepAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (fits or Monte Carlo to convergence): not in the short tier")
	}
	if raceBuild {
		t.Skip(secondPart)
	}
	x, y, nx, ny := stepData()
	type fit struct {
		bound, rise, over float64
	}
	cases := []struct {
		hidden   []int
		restarts int
		iters    int
	}{
		// A one-layer GP reaches its optimum (two near-equal ones, bounds
		// −15.664 and −15.651) in < 3000 iterations.
		{nil, 1, 3000},
		// The deep models keep creeping up for thousands of iterations;
		// 1000 iterations already show the figure's message (with -restarts
		// 3 -iters 2000 the 3-layer bound reaches ≈ −0.6, see the README).
		// A single start can land in a poor local optimum after a change
		// that only alters rounding, so the test, like the paper, keeps the
		// best bound of three restarts.
		{[]int{1}, 3, 1000},
		{[]int{1, 1}, 3, 1000},
	}
	fits := make([]fit, len(cases))
	for i, c := range cases {
		start := time.Now()
		m, best, _, err := FitRestarts(context.Background(), x, y, InitConfig{Hidden: c.hidden, Inducing: 15, Seed: 1},
			TrainerConfig{}, FitOptions{MaxIters: c.iters}, c.restarts, nil)
		if err != nil {
			t.Fatalf("%d layers: %v", len(c.hidden)+1, err)
		}
		r, _ := mustEval(t, m, engine.Options{})
		rise, over := riseOvershoot(t, m, nx, ny)
		fits[i] = fit{r.Bound, rise, over}
		t.Logf("%d layers: bound %.4f (restart %d), rise width %.4f, overshoot %.4f, fit %v", len(c.hidden)+1, r.Bound, best, rise, over, time.Since(start).Round(time.Millisecond))
	}
	one, three := fits[0], fits[2]
	// The issue quotes rise ≈ 0.15 and overshoot ≈ 0.06 for the one-layer
	// RBF GP; we measure 0.11–0.14 and 0.043–0.049 at its two (near-equal)
	// optima with 15 inducing points. The bands accept those and reject a
	// sharp fit (< 0.08) or a flat one (> 0.25).
	if one.rise < 0.08 || one.rise > 0.25 {
		t.Errorf("one-layer rise width %.4f, want ≈ 0.15 (0.08…0.25)", one.rise)
	}
	if one.over < 0.02 || one.over > 0.1 {
		t.Errorf("one-layer overshoot %.4f, want ≈ 0.06 (0.02…0.1)", one.over)
	}
	if !(three.rise*3 <= one.rise) {
		t.Errorf("3-layer rise width %.4f is not 3× sharper than the one-layer %.4f", three.rise, one.rise)
	}
	if !(three.over < one.over) {
		t.Errorf("3-layer overshoot %.4f not below the one-layer %.4f", three.over, one.over)
	}
	if !(three.bound > one.bound) {
		t.Errorf("3-layer bound %.4f does not beat the one-layer %.4f", three.bound, one.bound)
	}
	if two := fits[1]; !(two.bound > one.bound) {
		t.Errorf("2-layer bound %.4f does not beat the one-layer %.4f", two.bound, one.bound)
	}
}

// robotPath returns the robot data file beside the repository
// (../shared/data from the module root), skipping the test without it.
func robotPath(tb testing.TB) string {
	tb.Helper()
	p := filepath.Join("..", "..", "..", "shared", "data", "robot_wireless", "uw-floor.txt")
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("robot data not found at %s (the shared data are not committed): skipping", p)
	}
	return p
}

// TestRobotAcceptance fits time → 3 → 3 → 30 and time → 30 to the robot
// WiFi data with the same number of inducing points: the deep model must
// fit without divergence and beat the one-layer bound.
func TestRobotAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (fits or Monte Carlo to convergence): not in the short tier")
	}
	if raceBuild {
		t.Skip(secondPart)
	}
	ds, err := dataset.LoadRobot(robotPath(t))
	if err != nil {
		t.Fatal(err)
	}
	nx, ny := dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
	x, y := nx.Apply(ds.X), ny.Apply(ds.Y)
	bounds := map[string]float64{}
	for _, hidden := range [][]int{nil, {3, 3}} {
		name := fmt.Sprint(hidden)
		start := time.Now()
		m, err := Initialize(x, y, InitConfig{Hidden: hidden, Inducing: 15, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		// The one-layer GP, its q(u) at the optimum, converges within 50
		// iterations (−5220.9); the deep model passes it after ~2000
		// (seed 1: −5275 after 1000, −5153 after 3000; it converges near
		// −5131 after ~9000).
		fm, rep, err := Fit(context.Background(), m, TrainerConfig{}, FitOptions{MaxIters: 3000})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, e := range rep.Events {
			if strings.Contains(e, "diverged") || strings.Contains(e, "failed") {
				t.Errorf("%s: divergence: %s", name, e)
			}
		}
		r, _ := mustEval(t, fm, engine.Options{})
		if math.IsNaN(r.Bound) || math.IsInf(r.Bound, 0) {
			t.Fatalf("%s: bound %v", name, r.Bound)
		}
		bounds[name] = r.Bound
		t.Logf("hidden %s: bound %.2f after %d iterations in %v", name, r.Bound, rep.Iters, time.Since(start).Round(time.Millisecond))
	}
	if !(bounds["[3 3]"] > bounds["[]"]) {
		t.Errorf("3-layer bound %.2f does not beat the one-layer %.2f", bounds["[3 3]"], bounds["[]"])
	}
}
