package train

import (
	"context"
	"testing"

	"dgpviz/internal/dataset"
)

// BenchmarkFitStep3Layer fits the 3-layer step model (-hidden 1,1
// -inducing 15 -seed 1) with L-BFGS to convergence (Tol, at most 2000
// iterations): one restart per op. The target is < 2 s.
func BenchmarkFitStep3Layer(b *testing.B) {
	x, y, _, _ := stepData()
	iters := 0
	for b.Loop() {
		m, err := Initialize(x, y, InitConfig{Hidden: []int{1, 1}, Inducing: 15, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		_, rep, err := Fit(context.Background(), m, TrainerConfig{}, FitOptions{MaxIters: 2000})
		if err != nil {
			b.Fatal(err)
		}
		iters = rep.Iters
	}
	b.ReportMetric(float64(iters), "iters")
}

// BenchmarkRobotLBFGS500 runs 500 L-BFGS iterations of the robot model
// time → 3 → 3 → 30 with 15 inducing points per layer. The target
// is < 10 s.
func BenchmarkRobotLBFGS500(b *testing.B) {
	ds, err := dataset.LoadRobot(robotPath(b))
	if err != nil {
		b.Fatal(err)
	}
	nx, ny := dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
	x, y := nx.Apply(ds.X), ny.Apply(ds.Y)
	m0, err := Initialize(x, y, InitConfig{Hidden: []int{3, 3}, Inducing: 15, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		// A negligible tolerance: every one of the 500 iterations runs
		// unless the optimizer itself stops.
		_, _, err := Fit(context.Background(), m0.Clone(), TrainerConfig{Tol: 1e-300}, FitOptions{MaxIters: 500})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTrainerStep is one L-BFGS iteration of the 3-layer step model
// from its initialisation (the live server's unit of work).
func BenchmarkTrainerStep(b *testing.B) {
	x, y, _, _ := stepData()
	m, err := Initialize(x, y, InitConfig{Hidden: []int{1, 1}, Inducing: 15, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	var tr *Trainer
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%200 == 0 {
			// Restart every 200 iterations so that the steps measured are
			// those of an active fit, not of a converged one.
			b.StopTimer()
			tr, err = NewTrainer(m.Clone(), TrainerConfig{})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		i++
		if _, err := tr.Step(); err != nil {
			b.Fatal(err)
		}
	}
}
