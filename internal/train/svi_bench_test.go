package train

import (
	"fmt"
	"testing"

	"dgpviz/internal/dataset"
)

// BenchmarkSVIGrowth measures how an SVI fit's two costs grow
// (docs/measurements.md, "How the time grows"): a step (a minibatch's
// bound and gradient, the natural-gradient and Adam updates) and a check
// (the full-data bound in chunks, engine.Evaluator.EvaluateChunked), on
// the walk (dataset.Walk, 30 beacons) with the robot preset's model,
// varying the rows, the hidden layers' widths and the inducing points one
// at a time from rows=100000, width=3, inducing=15. One evaluator worker.
// Beside the wall time it reports the process's CPU time per operation
// (cpu-ms/op), the figure to trust on a shared machine. Run with a small
// -benchtime: a check of a million rows takes seconds.
//
//	go test -run '^$' -bench SVIGrowth -benchtime 3x ./internal/train
func BenchmarkSVIGrowth(b *testing.B) {
	type shape struct{ rows, width, inducing int }
	var shapes []shape
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		shapes = append(shapes, shape{n, 3, 15})
	}
	for _, w := range []int{6, 12} {
		shapes = append(shapes, shape{100_000, w, 15})
	}
	for _, m := range []int{30, 60} {
		shapes = append(shapes, shape{100_000, 3, m})
	}
	for _, s := range shapes {
		name := fmt.Sprintf("rows=%d/width=%d/inducing=%d", s.rows, s.width, s.inducing)
		var tr *Trainer
		setup := func(b *testing.B) {
			if tr != nil {
				return
			}
			x, y := walkData(s.rows, dataset.WalkBeacons, 1)
			x = dataset.FitNormalizer(x).Apply(x)
			y = dataset.FitNormalizer(y).Apply(y)
			m, err := Initialize(x, y, InitConfig{Hidden: []int{s.width, s.width}, Inducing: s.inducing, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			tr, err = NewTrainer(m, TrainerConfig{Method: SVI{}, Workers: 1})
			if err != nil {
				b.Fatal(err)
			}
			// The first step evaluates the start on all the data.
			if _, err := tr.Step(); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(name+"/step", func(b *testing.B) {
			setup(b)
			b.ReportAllocs()
			c0 := cpuSeconds()
			for b.Loop() {
				tr.svi.since = 0 // no check inside the steps measured
				if _, err := tr.Step(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuSeconds()-c0)*1e3/float64(b.N), "cpu-ms/op")
		})
		b.Run(name+"/check", func(b *testing.B) {
			setup(b)
			b.ReportAllocs()
			c0 := cpuSeconds()
			for b.Loop() {
				var info StepInfo
				tr.sviCheck(&info)
			}
			cpu := (cpuSeconds() - c0) / float64(b.N)
			b.ReportMetric(cpu*1e3, "cpu-ms/op")
			b.ReportMetric(cpu*1e9/float64(s.rows), "cpu-ns/row")
		})
	}
}
