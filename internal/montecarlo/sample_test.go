package montecarlo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// zScores collects (estimate − truth)/SE over many comparisons, so that
// a test can check both each one and their spread.
type zScores struct {
	t  *testing.T
	zs []float64
}

// check records one comparison and fails it beyond 4 standard errors
// (the tolerance; two-sided p = 6.3e-5 per comparison).
func (z *zScores) check(what string, est, truth, se float64) {
	z.t.Helper()
	v := (est - truth) / se
	z.zs = append(z.zs, v)
	if !(math.Abs(v) <= 4) {
		z.t.Errorf("%s: Monte Carlo %v, exact %v, SE %v: %.2f standard errors", what, est, truth, se, v)
	}
}

// rms checks that the z-scores' root mean square is near 1, as it is when
// the estimates are unbiased and the standard errors right: for k
// independent z-scores its standard deviation is about 1/√(2k).
func (z *zScores) rms() {
	z.t.Helper()
	var s float64
	for _, v := range z.zs {
		s += v * v
	}
	r := math.Sqrt(s / float64(len(z.zs)))
	// 6/√(2k): six standard deviations of the RMS.
	if tol := 6 / math.Sqrt(2*float64(len(z.zs))); math.Abs(r-1) > tol {
		t := z.t
		t.Errorf("RMS of %d z-scores is %.3f, want 1 ± %.3f", len(z.zs), r, tol)
	}
}

// TestMomentsMatchMessages checks the exact identity between the
// messages and the true response: for random 2- and 3-layer models and
// every layer I, with inputs the exact messages of layer I−1 (X for
// layer 0), the Monte Carlo mean of output d is mean_nd and its variance
// var_nd + 2σ²(compression_n/D + propagation_nd).
func TestMomentsMatchMessages(t *testing.T) {
	z := &zScores{t: t}
	const n = 8
	seeds := uint64(4)
	if testing.Short() {
		seeds = 2 // still 3 architectures × every layer: 384 z-scores
	}
	for _, tc := range []struct {
		widths  []int
		kernels []string
	}{
		{[]int{1, 2, 1}, []string{"rbf", "rbf"}},
		{[]int{1, 2, 2, 1}, []string{"rbf", "rbf", "rbf"}},
		{[]int{2, 3, 1}, []string{"rbf", "linear"}},
	} {
		for seed := uint64(1); seed <= seeds; seed++ {
			m := engine.RandomModel(rand.New(rand.NewPCG(seed, 11)), n, tc.widths, tc.kernels, 10)
			res, _, err := engine.Evaluate(m, engine.Options{OutputVariance: true})
			if err != nil {
				t.Fatal(err)
			}
			for i, el := range m.Layers {
				l := mustLayer(t, el, m.Jitter)
				_, _, d := l.Dims()
				mu, s := m.X, (*mat.Dense)(nil)
				if i > 0 {
					mu, s = res.Messages[i-1].Mean, res.Messages[i-1].Var
				}
				mo, err := l.Moments(mu, s, Options{Samples: 20000, Seed: seed*100 + uint64(i)})
				if err != nil {
					t.Fatal(err)
				}
				for r := 0; r < n; r++ {
					var sr []float64
					if s != nil {
						sr = s.RawRowView(r)
					}
					terms, err := l.Terms(mu.RawRowView(r), sr)
					if err != nil {
						t.Fatal(err)
					}
					for k := 0; k < d; k++ {
						name := fmt.Sprintf("%v seed %d layer %d datum %d output %d", tc.widths, seed, i, r, k)
						mean := res.Messages[i].Mean.At(r, k)
						trueVar := res.Messages[i].Var.At(r, k) + 2*el.NoiseVariance*(res.Layers[i].CompressionPerDatum[r]/float64(d)+terms.PropagationPerOutput[k])
						if d == 1 {
							// Engine quantities only.
							trueVar = res.Messages[i].Var.At(r, k) + 2*el.NoiseVariance*(res.Layers[i].CompressionPerDatum[r]+res.Layers[i].PropagationPerDatum[r])
						}
						z.check(name+" mean", mo.Mean.At(r, k), mean, mo.MeanSE.At(r, k))
						z.check(name+" var", mo.Var.At(r, k), trueVar, mo.VarSE.At(r, k))
					}
				}
			}
		}
	}
	z.rms()
}

// TestChainMoments checks ancestral sampling through a 2-layer model:
// layer 0's response to a certain input is exactly Gaussian, so layer
// 1's true marginal has the exact moments of the layer-1 message identity.
func TestChainMoments(t *testing.T) {
	z := &zScores{t: t}
	const n = 6
	for seed := uint64(1); seed <= 4; seed++ {
		m := engine.RandomModel(rand.New(rand.NewPCG(seed, 13)), n, []int{1, 2, 1}, []string{"rbf", "rbf"}, 8)
		res, _, err := engine.Evaluate(m, engine.Options{OutputVariance: true})
		if err != nil {
			t.Fatal(err)
		}
		mos, err := ChainMoments(m, m.X, Options{Samples: 20000, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if len(mos) != 2 {
			t.Fatalf("%d layers of moments, want 2", len(mos))
		}
		for i := range m.Layers {
			d := m.Layers[i].QMu.RawMatrix().Cols
			for r := 0; r < n; r++ {
				for k := 0; k < d; k++ {
					name := fmt.Sprintf("seed %d layer %d datum %d output %d", seed, i, r, k)
					tv := res.Messages[i].Var.At(r, k) + 2*m.Layers[i].NoiseVariance*res.Layers[i].CompressionPerDatum[r]/float64(d)
					if i == 1 {
						tv += 2 * m.Layers[i].NoiseVariance * res.Layers[i].PropagationPerDatum[r] // D = 1
					}
					z.check(name+" mean", mos[i].Mean.At(r, k), res.Messages[i].Mean.At(r, k), mos[i].MeanSE.At(r, k))
					z.check(name+" var", mos[i].Var.At(r, k), tv, mos[i].VarSE.At(r, k))
				}
			}
		}
	}
	z.rms()
}

// TestSampleChainShapes checks SampleChain's shapes and that its layer-0
// samples agree with ChainMoments' mean for the same input.
func TestSampleChainShapes(t *testing.T) {
	m := engine.RandomModel(rand.New(rand.NewPCG(5, 5)), 3, []int{1, 2, 2, 1}, []string{"rbf", "rbf", "rbf"}, 6)
	got, err := SampleChain(m, []float64{0.2}, Options{Samples: 5000, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{2, 2, 1} {
		if r, c := got[i].Dims(); r != 5000 || c != want {
			t.Errorf("layer %d: %d×%d samples, want 5000×%d", i, r, c, want)
		}
	}
	l := mustLayer(t, m.Layers[0], m.Jitter)
	tm, err := l.Terms([]float64{0.2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	z := &zScores{t: t}
	for k := 0; k < 2; k++ {
		col := mat.Col(nil, k, got[0])
		mean, sd := meanSD(col)
		z.check(fmt.Sprintf("output %d mean", k), mean, tm.Mean[k], sd/math.Sqrt(5000))
	}
}

// TestPointMass checks that with a certain input and q(u) a point mass
// the samples are the GP conditional exactly: the mean and variance of
// engine.LayerPosterior.FunctionAt (an independent implementation), and,
// with the conditional and noise left out too, the mean itself.
func TestPointMass(t *testing.T) {
	m := engine.RandomModel(rand.New(rand.NewPCG(21, 1)), 4, []int{2, 2}, []string{"rbf"}, 7)
	el := m.Layers[0]
	l := mustLayer(t, el, m.Jitter)
	post, err := engine.NewLayerPosterior(el, m.Jitter)
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.4, -0.7}
	mean, varU := make([]float64, 2), make([]float64, 2)
	varCond := post.FunctionAt(x, nil, mean, varU)

	// All spread left out: every sample is the mean.
	s, err := l.Sample(x, []float64{0, 0}, Options{Samples: 100, Seed: 1, NoQSpread: true, NoConditional: true, NoNoise: true})
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 100; r++ {
		for k := 0; k < 2; k++ {
			// 1e-12: two implementations of k(x,Z)Kuu⁻¹m.
			if v := s.At(r, k); math.Abs(v-mean[k]) > 1e-12 {
				t.Fatalf("sample %d output %d = %v, want the mean %v", r, k, v, mean[k])
			}
		}
	}

	// The GP conditional given u = m.
	s, err = l.Sample(x, nil, Options{Samples: 40000, Seed: 2, NoQSpread: true, NoNoise: true})
	if err != nil {
		t.Fatal(err)
	}
	z := &zScores{t: t}
	for k := 0; k < 2; k++ {
		col := mat.Col(nil, k, s)
		var a accum
		for _, v := range col {
			a.add(v)
		}
		mm, vr, mse, vse := a.stats()
		z.check(fmt.Sprintf("output %d mean", k), mm, mean[k], mse)
		z.check(fmt.Sprintf("output %d var", k), vr, varCond, vse)
		d, err := Compare(col, Gaussian{Mean: mean[k], Var: varCond})
		if err != nil {
			t.Fatal(err)
		}
		// E[W1] between n samples and their own Gaussian is about
		// 0.8σ/√n (Bobkov & Ledoux 2019); 4σ/√n leaves room.
		if lim := 4 * math.Sqrt(varCond/40000); d.W1 > lim {
			t.Errorf("output %d: W1 from the conditional %v > %v", k, d.W1, lim)
		}
	}

	// A literal point mass, S = (1e-9)² I, gives the same draws as
	// NoQSpread with the same seed, up to the 1e-9 spread.
	pm := el.Clone()
	for k := range pm.QSqrt {
		pm.QSqrt[k] = mat.NewDense(7, 7, nil)
		for i := 0; i < 7; i++ {
			pm.QSqrt[k].Set(i, i, 1e-9)
		}
	}
	lp := mustLayer(t, pm, m.Jitter)
	a, err := lp.Sample(x, nil, Options{Samples: 3000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Sample(x, nil, Options{Samples: 3000, Seed: 3, NoQSpread: true})
	if err != nil {
		t.Fatal(err)
	}
	// 1e-6: the difference is at most a few times 1e-9·‖Kuu⁻¹k‖·|ε|.
	if !mat.EqualApprox(a, b, 1e-6) {
		t.Errorf("point-mass q(u) and NoQSpread differ")
	}
}

// referenceSample draws the true response literally, with gonum: x ~
// N(mu, s), u ~ q(u) = N(m_d, L_d L_dᵀ), f | u ~ N(k Kuu⁻¹ u, k(x,x) −
// k Kuu⁻¹ kᵀ), plus noise.
func referenceSample(rng *rand.Rand, el *engine.Layer, jitter float64, mu, s []float64, n int) []float64 {
	post, err := engine.NewLayerPosterior(el, jitter)
	if err != nil {
		panic(err)
	}
	m, q, _ := el.Dims()
	out := make([]float64, n)
	x := make([]float64, q)
	kx := mat.NewVecDense(m, nil)
	eps := mat.NewVecDense(m, nil)
	var u, t mat.VecDense
	for i := range out {
		for r := range x {
			x[r] = mu[r] + math.Sqrt(s[r])*rng.NormFloat64()
		}
		post.CrossCov(kx.RawVector().Data, x)
		for j := 0; j < m; j++ {
			eps.SetVec(j, rng.NormFloat64())
		}
		u.MulVec(el.QSqrt[0], eps) // QSqrt is lower triangular here
		u.AddVec(&u, el.QMu.ColView(0))
		t.MulVec(post.KInv, kx)
		cond := el.Kernel.Eval(x, x) - mat.Dot(kx, &t)
		out[i] = mat.Dot(&t, &u) + math.Sqrt(math.Max(cond, 0))*rng.NormFloat64() + math.Sqrt(el.NoiseVariance)*rng.NormFloat64()
	}
	return out
}

// ksStatistic returns the two-sample Kolmogorov–Smirnov statistic.
func ksStatistic(a, b []float64) float64 {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	var i, j int
	var d float64
	for i < len(a) && j < len(b) {
		if a[i] <= b[j] {
			i++
		} else {
			j++
		}
		d = math.Max(d, math.Abs(float64(i)/float64(len(a))-float64(j)/float64(len(b))))
	}
	return d
}

// TestMatchesLiteralSampler compares the collapsed sampler with a literal
// one (u drawn explicitly) on non-Gaussian responses, by a two-sample
// Kolmogorov–Smirnov test.
func TestMatchesLiteralSampler(t *testing.T) {
	m := engine.StepModel(10)
	el := m.Layers[0]
	for k := range el.QSqrt {
		// Correlated q(u) so that the off-diagonal of L_d matters.
		for i := 1; i < 10; i++ {
			el.QSqrt[k].Set(i, i-1, 0.1)
		}
	}
	l := mustLayer(t, el, m.Jitter)
	for i, in := range []GaussianInput{{0, 0.09}, {1.3, 0.04}, {-0.5, 0.25}} {
		const n = 20000
		got, err := l.Sample([]float64{in.Mean}, []float64{in.Var}, Options{Samples: n, Seed: uint64(i)})
		if err != nil {
			t.Fatal(err)
		}
		want := referenceSample(rand.New(rand.NewPCG(uint64(i), 99)), el, m.Jitter, []float64{in.Mean}, []float64{in.Var}, n)
		// Critical value at α = 1e-4: sqrt(−ln(α/2)/2)·sqrt(2/n) = 0.0222.
		if ks := ksStatistic(got.RawMatrix().Data, want); ks > 0.0222 {
			t.Errorf("input %+v: KS statistic %v > 0.0222", in, ks)
		}
	}
}

// TestReproducible checks that samples depend on the seed only, not on
// the number of goroutines.
func TestReproducible(t *testing.T) {
	m := engine.RandomModel(rand.New(rand.NewPCG(8, 8)), 5, []int{1, 2, 1}, []string{"rbf", "rbf"}, 6)
	l := mustLayer(t, m.Layers[0], m.Jitter)
	var prev *mat.Dense
	for _, w := range []int{1, 2, 3, 7} {
		s, err := l.Sample([]float64{0.1}, []float64{0.2}, Options{Samples: 5000, Seed: 42, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if prev != nil && !mat.Equal(prev, s) {
			t.Errorf("%d workers give other samples than 1", w)
		}
		prev = s
	}
	other, err := l.Sample([]float64{0.1}, []float64{0.2}, Options{Samples: 5000, Seed: 43})
	if err != nil {
		t.Fatal(err)
	}
	if mat.Equal(prev, other) {
		t.Errorf("seeds 42 and 43 give the same samples")
	}
	a, err := ChainMoments(m, m.X, Options{Samples: 3000, Seed: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ChainMoments(m, m.X, Options{Samples: 3000, Seed: 1, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if !mat.Equal(a[i].Mean, b[i].Mean) || !mat.Equal(a[i].Var, b[i].Var) {
			t.Errorf("layer %d: chain moments depend on the number of workers", i)
		}
	}
}

// TestAccum checks the one-pass moments against two-pass sums, for
// merged and unmerged accumulators.
func TestAccum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 1000)
	for i := range x {
		x[i] = 1e3 + rng.ExpFloat64() // shifted and skewed
	}
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var m2, m3, m4 float64
	for _, v := range x {
		d := v - mean
		m2 += d * d
		m3 += d * d * d
		m4 += d * d * d * d
	}
	var whole accum
	for _, v := range x {
		whole.add(v)
	}
	var merged accum
	for _, cut := range [][2]int{{0, 1}, {1, 300}, {300, 301}, {301, 1000}} {
		var part accum
		for _, v := range x[cut[0]:cut[1]] {
			part.add(v)
		}
		merged.merge(&part)
	}
	for _, a := range []accum{whole, merged} {
		// 1e-9 relative: rounding of sums of 1000 terms.
		for _, c := range [][2]float64{{a.mean, mean}, {a.m2, m2}, {a.m3, m3}, {a.m4, m4}} {
			if math.Abs(c[0]-c[1]) > 1e-9*math.Abs(c[1]) {
				t.Errorf("moment %v, two-pass %v", c[0], c[1])
			}
		}
	}
}

// TestBadSamplingRequests checks that bad requests get errors, not panics.
func TestBadSamplingRequests(t *testing.T) {
	m := engine.RandomModel(rand.New(rand.NewPCG(1, 1)), 4, []int{1, 2}, []string{"rbf"}, 4)
	l := mustLayer(t, m.Layers[0], m.Jitter)
	bad := m.Clone()
	bad.Layers[0].NoiseVariance = -1
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"zero samples", func() error { _, err := l.Sample([]float64{0}, nil, Options{}); return err }, "samples"},
		{"absurd samples", func() error { _, err := l.Sample([]float64{0}, nil, Options{Samples: MaxSamples + 1}); return err }, "samples"},
		{"negative workers", func() error { _, err := l.Sample([]float64{0}, nil, Options{Samples: 10, Workers: -1}); return err }, "workers"},
		{"wrong input length", func() error { _, err := l.Sample([]float64{0, 1}, nil, Options{Samples: 10}); return err }, "expects 1"},
		{"negative variance", func() error { _, err := l.Sample([]float64{0}, []float64{-1}, Options{Samples: 10}); return err }, "variance"},
		{"NaN mean", func() error { _, err := l.Sample([]float64{math.NaN()}, nil, Options{Samples: 10}); return err }, "not finite"},
		{"moments columns", func() error { _, err := l.Moments(mat.NewDense(2, 3, nil), nil, Options{Samples: 10}); return err }, "columns"},
		{"moments nil", func() error { _, err := l.Moments(nil, nil, Options{Samples: 10}); return err }, "no input"},
		{"too many in total", func() error {
			_, err := l.Moments(mat.NewDense(1000, 1, nil), nil, Options{Samples: MaxSamples})
			return err
		}, "more than the limit"},
		{"invalid model", func() error { _, err := ChainMoments(bad, bad.X, Options{Samples: 10}); return err }, "noise_variance"},
		{"nil model", func() error { _, err := SampleChain(nil, []float64{0}, Options{Samples: 10}); return err }, "nil model"},
		{"nil layer", func() error { _, err := NewLayer(nil, 0); return err }, "nil layer"},
		{"bad jitter", func() error { _, err := NewLayer(m.Layers[0], math.NaN()); return err }, "jitter"},
		{"bad noise", func() error { _, err := NewLayer(bad.Layers[0], 0); return err }, "noise"},
	} {
		err := tc.run()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.HasPrefix(err.Error(), "montecarlo: ") {
			t.Errorf("%s: error %v, want one without a package prefix mentioning %q", tc.name, err, tc.want)
		}
	}
}
