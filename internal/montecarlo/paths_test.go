package montecarlo

import (
	"math"
	"math/rand/v2"
	"testing"

	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// TestPathsOneLayer: a one-layer GP's paths are Gaussian processes with
// mean K_xu Kuu⁻¹ m and covariance K_xx − K_xu Kuu⁻¹ K_ux +
// K_xu Kuu⁻¹ S Kuu⁻¹ K_ux, computed here with gonum from the layer's
// parameters; the paths' sample mean, variance and covariance of
// neighbouring inputs must match within Monte Carlo error.
func TestPathsOneLayer(t *testing.T) {
	m := engine.StepModel(12)
	xs := []float64{-2.5, -1, -0.1, 0, 0.4, 2}
	const n = 3000 // the test checks moments: more than the page draws
	paths, err := Paths(m, xs, 0, MaxPaths, 1)
	if err != nil {
		t.Fatal(err)
	}
	all := paths
	for s := uint64(2); len(all) < n; s++ {
		more, err := Paths(m, xs, 0, MaxPaths, s)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, more...)
	}
	mean, cov := closedFormPath(m.Layers[0], xs, m.Jitter)
	g := len(xs)
	for i := range g {
		for j := i; j < min(g, i+2); j++ {
			var si, sj, sij float64
			for _, p := range all {
				si += p[i]
				sj += p[j]
			}
			mi, mj := si/float64(len(all)), sj/float64(len(all))
			for _, p := range all {
				sij += (p[i] - mi) * (p[j] - mj)
			}
			c := sij / float64(len(all)-1)
			want := cov.At(i, j)
			// The standard error of a sample covariance of a Gaussian pair:
			// √((σ_ii σ_jj + σ_ij²)/n).
			se := math.Sqrt((cov.At(i, i)*cov.At(j, j) + want*want) / float64(len(all)))
			if math.Abs(c-want) > 5*se {
				t.Errorf("cov(x=%v, x=%v): paths %.5f, closed form %.5f (se %.5f)", xs[i], xs[j], c, want, se)
			}
			if i == j && math.Abs(mi-mean[i]) > 5*math.Sqrt(cov.At(i, i)/float64(len(all))) {
				t.Errorf("mean at x=%v: paths %.5f, closed form %.5f", xs[i], mi, mean[i])
			}
		}
	}
}

// closedFormPath is a one-layer GP's mean and covariance of f (no noise)
// at the inputs xs.
func closedFormPath(l *engine.Layer, xs []float64, jitter float64) ([]float64, *mat.SymDense) {
	mz, _, _ := l.Dims()
	g := len(xs)
	kuu := mat.NewSymDense(mz, nil)
	for i := range mz {
		for j := range mz {
			kuu.SetSym(i, j, l.Kernel.Eval(l.InducingInputs.RawRowView(i), l.InducingInputs.RawRowView(j)))
		}
		kuu.SetSym(i, i, kuu.At(i, i)+jitter)
	}
	kxu := mat.NewDense(g, mz, nil)
	kxx := mat.NewSymDense(g, nil)
	for i := range g {
		for j := range mz {
			kxu.Set(i, j, l.Kernel.Eval([]float64{xs[i]}, l.InducingInputs.RawRowView(j)))
		}
		for j := range g {
			kxx.SetSym(i, j, l.Kernel.Eval([]float64{xs[i]}, []float64{xs[j]}))
		}
	}
	var a mat.Dense // K_xu Kuu⁻¹
	if err := a.Solve(kuu, kxu.T()); err != nil {
		panic(err)
	}
	at := a.T() // g × mz
	var mean mat.VecDense
	mean.MulVec(at, l.QMu.ColView(0))
	var s mat.Dense
	s.Mul(l.QSqrt[0], l.QSqrt[0].T())
	var q, sq, as, cov mat.Dense
	q.Mul(at, kxu.T())
	as.Mul(at, &s)
	sq.Mul(&as, at.T())
	cov.Sub(kxx, &q)
	cov.Add(&cov, &sq)
	out := mat.NewSymDense(g, nil)
	for i := range g {
		for j := range g {
			out.SetSym(i, j, cov.At(i, j))
		}
	}
	return mean.RawVector().Data, out
}

// TestPathsThroughLayers: at each input a path through every layer is a
// draw of the chain without the layers' noise, so its mean and variance
// must match SampleChain's with NoNoise there, within Monte Carlo error.
func TestPathsThroughLayers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := engine.RandomModel(rng, 20, []int{1, 2, 1}, []string{"rbf", "rbf", "rbf"}, 6)
	xs := []float64{-1.5, 0, 0.7}
	var all [][]float64
	for s := uint64(1); len(all) < 2000; s++ {
		p, err := Paths(m, xs, 0, MaxPaths, s)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, p...)
	}
	for i, x := range xs {
		chain, err := SampleChain(m, []float64{x}, Options{Samples: 20000, Seed: 9, NoNoise: true})
		if err != nil {
			t.Fatal(err)
		}
		last := chain[len(chain)-1]
		var cm, cv float64
		r, _ := last.Dims()
		for s := range r {
			cm += last.At(s, 0)
		}
		cm /= float64(r)
		for s := range r {
			cv += (last.At(s, 0) - cm) * (last.At(s, 0) - cm)
		}
		cv /= float64(r - 1)
		var pm, pv float64
		for _, p := range all {
			pm += p[i]
		}
		pm /= float64(len(all))
		for _, p := range all {
			pv += (p[i] - pm) * (p[i] - pm)
		}
		pv /= float64(len(all) - 1)
		// Means within 5 standard errors of their difference; variances
		// within 15 % (a deep GP's response is not Gaussian: its variance's
		// error exceeds the Gaussian 2σ⁴/n).
		if se := math.Sqrt(cv/float64(len(all)) + cv/float64(r)); math.Abs(pm-cm) > 5*se {
			t.Errorf("x=%v: paths' mean %.4f, chains' %.4f (se %.4f)", x, pm, cm, se)
		}
		if math.Abs(pv-cv) > 0.15*cv {
			t.Errorf("x=%v: paths' variance %.4f, chains' %.4f", x, pv, cv)
		}
	}
}

// TestPathsContinuous: a path's steps between neighbouring inputs shrink
// with their spacing, as a continuous function's do, where the layers'
// independent noise would leave them as large at any spacing.
func TestPathsContinuous(t *testing.T) {
	m := engine.StepModel(12)
	for _, g := range []int{50, 400} {
		xs := make([]float64, g)
		for i := range xs {
			xs[i] = -1 + 2*float64(i)/float64(g-1)
		}
		paths, err := Paths(m, xs, 0, 20, 1)
		if err != nil {
			t.Fatal(err)
		}
		var big float64
		for _, p := range paths {
			for i := 1; i < g; i++ {
				big = math.Max(big, math.Abs(p[i]-p[i-1]))
			}
		}
		// StepModel's lengthscale is of order 1: at spacing 2/399 a step
		// of a smooth path is a few hundredths of its range.
		if g == 400 && big > 0.1 {
			t.Errorf("%d inputs: largest step of a path %.3f, want a continuous path (< 0.1)", g, big)
		}
	}
}

func TestPathsBadRequests(t *testing.T) {
	m := engine.StepModel(12)
	for _, c := range []struct {
		xs     []float64
		dim, n int
	}{
		{[]float64{0}, 0, 5},
		{[]float64{0, 1}, 1, 5},
		{[]float64{0, 1}, 0, 0},
		{[]float64{0, 1}, 0, MaxPaths + 1},
		{[]float64{0, math.NaN()}, 0, 5},
	} {
		if _, err := Paths(m, c.xs, c.dim, c.n, 1); err == nil {
			t.Errorf("Paths(%v, dim %d, %d paths): no error", c.xs, c.dim, c.n)
		}
	}
}
