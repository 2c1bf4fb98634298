package montecarlo

import (
	"dgpviz/internal/engine"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// BenchmarkLayerSample draws samples of one 1-D RBF layer with M = 20
// inducing points at a Gaussian input; it reports samples per second.
func BenchmarkLayerSample(b *testing.B) {
	l := mustLayer(b, engine.StepModel(20).Layers[0], 1e-6)
	const n = 100000
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Sample([]float64{0.1}, []float64{0.04}, Options{Samples: n, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkChain3 samples whole chains through a 3-layer model (widths
// 1-2-2-1, M = 20 per layer); it reports chains per second.
func BenchmarkChain3(b *testing.B) {
	m := engine.RandomModel(rand.New(rand.NewPCG(1, 1)), 4, []int{1, 2, 2, 1}, []string{"rbf", "rbf", "rbf"}, 20)
	x := mat.NewDense(1, 1, []float64{0.3})
	const n = 50000
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ChainMoments(m, x, Options{Samples: n, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "chains/s")
}

// BenchmarkMessageFigure is the live panel's update: four inputs × 20,000
// samples through a layer with M = 20, with densities and distances.
func BenchmarkMessageFigure(b *testing.B) {
	m := engine.StepModel(20)
	ins := []GaussianInput{{-0.5, 0.01}, {0, 0.04}, {1.4, 0.01}, {0, 0.25}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MessageFigure(m, 0, ins, 20000, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDraw is the hot loop alone: one sample of a 1-D layer, M = 20.
func BenchmarkDraw(b *testing.B) {
	l := mustLayer(b, engine.StepModel(20).Layers[0], 1e-6)
	dr := newDrawer([]*plan{newPlan(l, &Options{})}, 1)
	dr.seed(1, 0)
	mu, s := []float64{0.1}, []float64{0.04}
	b.ReportAllocs()
	for b.Loop() {
		dr.sample(mu, s)
	}
}

// BenchmarkPaths draws the samples view's 12 paths at 150 inputs through
// a 3-layer model of 1-D layers (M = 12 per layer): one conditional
// covariance factorised per path and layer, cubic in the inputs.
func BenchmarkPaths(b *testing.B) {
	m := engine.RandomModel(rand.New(rand.NewPCG(1, 1)), 30, []int{1, 1, 1, 1}, []string{"rbf", "rbf", "rbf"}, 12)
	xs := make([]float64, 150)
	for i := range xs {
		xs[i] = -3 + 6*float64(i)/float64(len(xs)-1)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Paths(m, xs, 0, 12, 1); err != nil {
			b.Fatal(err)
		}
	}
}
