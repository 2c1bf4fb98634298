package engine

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// benchConfigs are the benchmark shapes: the step model, the robot
// WiFi model and a large synthetic one.
var benchConfigs = []struct {
	name   string
	n, m   int
	widths []int
}{
	{"step", 30, 10, []int{1, 1, 1, 1}},
	{"robot", 215, 30, []int{1, 3, 3, 30}},
	{"large", 2000, 50, []int{1, 3, 3, 30}},
}

func BenchmarkBoundGradient(b *testing.B) {
	for _, c := range benchConfigs {
		rng := rand.New(rand.NewPCG(1, 1))
		m := RandomModel(rng, c.n, c.widths, []string{"rbf", "rbf", "rbf"}, c.m)
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/workers=%d", c.name, workers), func(b *testing.B) {
				e := Evaluator{Workers: workers}
				if _, _, err := e.Evaluate(m, Options{Gradient: true}); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, _, err := e.Evaluate(m, Options{Gradient: true}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkBound(b *testing.B) {
	for _, c := range benchConfigs {
		rng := rand.New(rand.NewPCG(1, 1))
		m := RandomModel(rng, c.n, c.widths, []string{"rbf", "rbf", "rbf"}, c.m)
		b.Run(c.name, func(b *testing.B) {
			var e Evaluator
			b.ReportAllocs()
			for range b.N {
				if _, _, err := e.Evaluate(m, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScalingN shows the cost's growth in N at fixed M (robot shape):
// near-linear when the per-datum loops dominate.
func BenchmarkScalingN(b *testing.B) {
	for _, n := range []int{250, 500, 1000, 2000} {
		rng := rand.New(rand.NewPCG(1, 1))
		m := RandomModel(rng, n, []int{1, 3, 3, 30}, []string{"rbf", "rbf", "rbf"}, 30)
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			e := Evaluator{Workers: 1}
			for range b.N {
				if _, _, err := e.Evaluate(m, Options{Gradient: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWide is BenchmarkScalingN's evaluation at hidden widths 12 (the
// growth table's widest shape, 15 inducing points) at two sizes, bound
// alone and with the gradient: its allocations per evaluation should not
// depend on N.
func BenchmarkWide(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		rng := rand.New(rand.NewPCG(1, 1))
		m := RandomModel(rng, n, []int{2, 12, 12, 30}, []string{"rbf", "rbf", "rbf"}, 15)
		for _, grad := range []bool{false, true} {
			b.Run(fmt.Sprintf("N=%d/gradient=%v", n, grad), func(b *testing.B) {
				e := Evaluator{Workers: 1}
				b.ReportAllocs()
				for range b.N {
					if _, _, err := e.Evaluate(m, Options{Gradient: grad}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkPrepare times what each layer of the robot model computes from
// its parameters alone, before the data: the D=30 output layer's share is
// on the critical path of a parallel evaluation.
func BenchmarkPrepare(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	m := RandomModel(rng, 215, []int{1, 3, 3, 30}, []string{"rbf", "rbf", "rbf"}, 30)
	for i, l := range m.Layers {
		b.Run(fmt.Sprintf("robot/layer=%d", i), func(b *testing.B) {
			var w layerWork
			for range b.N {
				if err := w.prepare(l, m.Jitter, 1, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFittedBoundGradient: the fitted fixtures (and the -refrobot
// model), whose ill-conditioned layers take the exact ΣΨ2 and the
// compensated whitening (compensateAbove) that random models do not.
func BenchmarkFittedBoundGradient(b *testing.B) {
	for _, fm := range fittedModels(b) {
		b.Run(filepath.Base(fm.path), func(b *testing.B) {
			e := Evaluator{Workers: 1}
			for range b.N {
				if _, _, err := e.Evaluate(fm.model, Options{Gradient: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOptimalFinalQ is BenchmarkBoundGradient (one worker) with the
// final layer's q(u) at its optimum: its extra first pass over the final
// layer's data and the M×M solve.
func BenchmarkOptimalFinalQ(b *testing.B) {
	for _, c := range benchConfigs[:2] {
		rng := rand.New(rand.NewPCG(1, 1))
		m := RandomModel(rng, c.n, c.widths, []string{"rbf", "rbf", "rbf"}, c.m)
		for _, collapsed := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/optimal=%v", c.name, collapsed), func(b *testing.B) {
				e := Evaluator{Workers: 1}
				opt := Options{Gradient: true, OptimalFinalQ: collapsed, NoOutputMessage: true}
				if _, _, err := e.Evaluate(m, opt); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, _, err := e.Evaluate(m, opt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
