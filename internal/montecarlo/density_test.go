package montecarlo

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func normalSamples(seed uint64, n int, mean, sd float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0))
	x := make([]float64, n)
	for i := range x {
		x[i] = mean + sd*rng.NormFloat64()
	}
	return x
}

func trapezoid(x, p []float64) float64 {
	var s float64
	for i := 1; i < len(x); i++ {
		s += 0.5 * (p[i] + p[i-1]) * (x[i] - x[i-1])
	}
	return s
}

// TestKDE checks that the estimate integrates to 1 and matches its
// expectation for Gaussian samples: a Gaussian KDE of N(μ, σ²) samples
// has expectation N(μ, σ² + h²) exactly.
func TestKDE(t *testing.T) {
	for _, tc := range []struct {
		name     string
		samples  []float64
		points   int
		mean, sd float64 // the sampled Gaussian; sd 0: not Gaussian
	}{
		// 50,000 samples: the pointwise sd of the estimate at the mode,
		// sqrt(f/(2√π n h)), is about 0.009 for σ = 0.5.
		{"binned", normalSamples(1, 50000, 1, 0.5), 256, 1, 0.5},
		{"default grid", normalSamples(2, 50000, -3, 2), 0, -3, 2},
		// 10 grid points are coarser than h/4: interpolated from a fine grid.
		{"coarse grid", normalSamples(3, 50000, 0, 1), 10, 0, 1},
		// One outlier 1e5 away: a fine grid would need millions of points,
		// so the kernel sum is exact.
		{"outlier", append(normalSamples(6, 20000, 0, 1), 1e5), 256, 0, 0},
		// Two far-apart modes: the grid is wide relative to h.
		{"bimodal", append(normalSamples(4, 5000, -50, 0.1), normalSamples(5, 5000, 50, 0.1)...), 256, 0, 0},
	} {
		d, err := KDE(tc.samples, tc.points)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// The naive kernel sum at every 16th grid point (and every point of
		// short grids): linear binning errs by O((spacing/h)²), below 1e-3
		// of the peak for spacing ≤ h/4; the exact sum only by its
		// truncation at 6h (1.5e-8).
		tol := 1e-3
		if tc.name == "outlier" {
			tol = 1e-7
		}
		for i := 0; i < len(d.X); i += 1 + len(d.X)/16 {
			var want float64
			for _, x := range tc.samples {
				u := (d.X[i] - x) / d.Bandwidth
				want += normPDF(u) / d.Bandwidth
			}
			want /= float64(len(tc.samples))
			if math.Abs(d.P[i]-want) > tol*math.Max(slices.Max(d.P), 1/(d.Bandwidth*math.Sqrt(2*math.Pi))) {
				t.Errorf("%s: density at %v is %v, the kernel sum %v", tc.name, d.X[i], d.P[i], want)
			}
		}
		if tc.points == 10 || tc.name == "outlier" {
			// Too coarse a grid for the trapezoid rule to integrate.
			continue
		}
		// 1e-3: the trapezoid rule on the grid; the tails beyond 4h hold < 3.2e-5.
		if got := trapezoid(d.X, d.P); math.Abs(got-1) > 1e-3 {
			t.Errorf("%s: integrates to %v, want 1", tc.name, got)
		}
		if tc.sd == 0 {
			continue
		}
		want := Gaussian{tc.mean, tc.sd*tc.sd + d.Bandwidth*d.Bandwidth}
		f := gaussPDF(want)
		peak := f(tc.mean)
		for i, x := range d.X {
			// 5% of the peak: about five pointwise standard deviations.
			if diff := math.Abs(d.P[i] - f(x)); diff > 0.05*peak {
				t.Errorf("%s: density at %v is %v, want %v", tc.name, x, d.P[i], f(x))
				break
			}
		}
		// Silverman's rule for Gaussian data: 0.9σn^(−1/5) (IQR/1.34 ≈ σ).
		if h := 0.9 * tc.sd * math.Pow(50000, -0.2); math.Abs(d.Bandwidth-h) > 0.05*h {
			t.Errorf("%s: bandwidth %v, want about %v", tc.name, d.Bandwidth, h)
		}
	}
}

// TestHistogram checks that histograms integrate to 1 exactly and count
// every sample.
func TestHistogram(t *testing.T) {
	for _, tc := range []struct {
		samples []float64
		bins    int
	}{
		{normalSamples(1, 1000, 0, 1), 0},
		{normalSamples(2, 1000, 5, 3), 7},
		{[]float64{2, 2, 2}, 0}, // all equal: one narrow bin
	} {
		h, err := NewHistogram(tc.samples, tc.bins)
		if err != nil {
			t.Fatal(err)
		}
		var s float64
		for b, p := range h.Density {
			s += p * (h.Edges[b+1] - h.Edges[b])
		}
		// 1e-12: exact up to rounding.
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("histogram integrates to %v", s)
		}
		if tc.bins > 0 && len(h.Density) != tc.bins {
			t.Errorf("%d bins, want %d", len(h.Density), tc.bins)
		}
	}
}

// TestW1Exact checks the Wasserstein-1 computation on samples where it is
// known in closed form: one sample a against N(0,1) has
// W1 = E|Z − a| = 2φ(a) + a(2Φ(a) − 1); two samples ±a, by symmetry,
// twice the integral over t > 0 of |½ − Φ(t)| on (0, a) and 1 − Φ(t) beyond.
func TestW1Exact(t *testing.T) {
	for _, a := range []float64{0, 0.5, -1.3, 4} {
		want := 2*normPDF(a) + a*(2*normCDF(a)-1)
		if got, _ := w1Sorted([]float64{a}, 0, 1); math.Abs(got-want) > 1e-12 {
			t.Errorf("W1({%v}, N(0,1)) = %v, want %v", a, got, want)
		}
	}
	for _, a := range []float64{0.3, 1, 2.5} {
		// ∫_0^a (Φ−½) + ∫_a^∞ (1−Φ) = [G(a) − G(0) − a/2] + [φ(a) − a(1−Φ(a))].
		G := func(z float64) float64 { return z*normCDF(z) + normPDF(z) }
		want := 2 * (G(a) - G(0) - a/2 + normPDF(a) - a*(1-normCDF(a)))
		if got, _ := w1Sorted([]float64{-a, a}, 0, 1); math.Abs(got-want) > 1e-12 {
			t.Errorf("W1({±%v}, N(0,1)) = %v, want %v", a, got, want)
		}
	}
	// Scaling: W1 of σ·x against N(m, σ²) is σ times W1 of x against N(0,1).
	x := normSorted(7, 100)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = 3 + 2*v
	}
	a, _ := w1Sorted(y, 3, 2)
	b, _ := w1Sorted(x, 0, 1)
	if math.Abs(a-2*b) > 1e-12 {
		t.Errorf("W1 does not scale: %v vs 2·%v", a, b)
	}
}

func normSorted(seed uint64, n int) []float64 {
	x := normalSamples(seed, n, 0, 1)
	s := append([]float64(nil), x...)
	sortFloats(s)
	return s
}

// TestCompareGaussians checks Compare on samples of one Gaussian against
// another, where the distances are known: W1 between N(μ1, σ²) and
// N(μ2, σ²) is |μ1 − μ2|; between N(0, σ1²) and N(0, σ2²) it is
// |σ1 − σ2|·√(2/π); KL(N(0,1) ‖ N(0,2)) = ½(½ − 1 + ln 2).
func TestCompareGaussians(t *testing.T) {
	for _, tc := range []struct {
		name          string
		mean, sd      float64
		g             Gaussian
		w1, kl, klTol float64
	}{
		{"shifted", 0, 1, Gaussian{0.5, 1}, 0.5, 0.125, 0.01},
		{"narrower", 0, 1, Gaussian{0, 4}, math.Sqrt(2 / math.Pi), 0.5 * (0.25 - 1 + math.Log(4)), 0.01},
		{"wider", 0, 1, Gaussian{0, 2}, (math.Sqrt2 - 1) * math.Sqrt(2/math.Pi), 0.5 * (0.5 - 1 + math.Log(2)), 0.01},
		{"same", 2, 3, Gaussian{2, 9}, 0, 0, 0.01},
	} {
		const n = 100000
		d, err := Compare(normalSamples(11, n, tc.mean, tc.sd), tc.g)
		if err != nil {
			t.Fatal(err)
		}
		// 5 SE + the O(σ/√n) bias of the empirical W1 (E[W1] ≈ 0.8σ/√n
		// when the distributions agree).
		if tol := 5*d.W1SE + 2*tc.sd/math.Sqrt(n); math.Abs(d.W1-tc.w1) > tol {
			t.Errorf("%s: W1 %v ± %v, want %v", tc.name, d.W1, d.W1SE, tc.w1)
		}
		if math.Abs(d.KL-tc.kl) > tc.klTol {
			t.Errorf("%s: KL %v ± %v, want %v", tc.name, d.KL, d.KLSE, tc.kl)
		}
		if math.Abs(d.MeanError-(tc.mean-tc.g.Mean)) > 5*d.MeanErrorSE {
			t.Errorf("%s: mean error %v ± %v", tc.name, d.MeanError, d.MeanErrorSE)
		}
		if math.Abs(d.VarError-(tc.sd*tc.sd-tc.g.Var)) > 5*d.VarErrorSE {
			t.Errorf("%s: var error %v ± %v", tc.name, d.VarError, d.VarErrorSE)
		}
	}
}

// TestCompareStandardErrors checks the delta-method standard errors of W1
// and KL against the spread of the statistics over 40 independent seeds.
func TestCompareStandardErrors(t *testing.T) {
	const seeds = 40
	var w1, kl, w1se, klse accum
	for s := uint64(0); s < seeds; s++ {
		d, err := Compare(normalSamples(100+s, 20000, 0, 1), Gaussian{0.2, 1.5})
		if err != nil {
			t.Fatal(err)
		}
		w1.add(d.W1)
		kl.add(d.KL)
		w1se.add(d.W1SE)
		klse.add(d.KLSE)
	}
	for _, c := range []struct {
		name   string
		spread accum
		meanSE accum
	}{{"W1", w1, w1se}, {"KL", kl, klse}} {
		_, v, _, _ := c.spread.stats()
		sd := math.Sqrt(v)
		// A factor 1.6: the sd of 40 values is itself uncertain by ≈ 11%,
		// and the delta method is first order.
		r := c.meanSE.mean / sd
		t.Logf("%s: mean SE / spread over seeds = %.3f", c.name, r)
		if r < 1/1.6 || r > 1.6 {
			t.Errorf("%s: mean SE %v, spread over seeds %v", c.name, c.meanSE.mean, sd)
		}
	}
}

// TestBadDensityRequests checks errors for unusable samples and sizes.
func TestBadDensityRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"one sample", func() error { _, err := KDE([]float64{1}, 0); return err }, "at least 2"},
		{"NaN sample", func() error { _, err := KDE([]float64{1, math.NaN()}, 0); return err }, "not finite"},
		{"grid", func() error { _, err := KDE([]float64{1, 2}, 1); return err }, "grid points"},
		{"bins", func() error { _, err := NewHistogram([]float64{1, 2}, MaxBins+1); return err }, "bins"},
		{"zero variance", func() error { _, err := Compare([]float64{1, 2}, Gaussian{0, 0}); return err }, "positive variance"},
	} {
		err := tc.run()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.HasPrefix(err.Error(), "montecarlo: ") {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func sortFloats(x []float64) { slices.Sort(x) }
