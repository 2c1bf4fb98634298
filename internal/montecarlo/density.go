package montecarlo

import (
	"fmt"
	"math"
	"slices"
)

// Density is a density estimate on an evenly spaced grid.
type Density struct {
	X         []float64 `json:"x"`
	P         []float64 `json:"p"`
	Bandwidth float64   `json:"bandwidth"`
}

// Histogram is a normalised histogram: Density[b] is the fraction of the
// samples in [Edges[b], Edges[b+1]) divided by the bin width, so that the
// histogram integrates to 1.
type Histogram struct {
	Edges   []float64 `json:"edges"`
	Density []float64 `json:"density"`
}

// Limits on grid and bin counts.
const (
	MaxGridPoints = 1 << 16
	MaxBins       = 10000
)

// DefaultGridPoints is the number of grid points of KDE when given 0.
const DefaultGridPoints = 256

// KDE returns a Gaussian kernel density estimate of the samples on
// `points` grid points (0: DefaultGridPoints) spanning
// [min − 4h, max + 4h], so that it integrates to 1 up to the kernel mass
// beyond 4h of the extreme samples (< 3.2e-5).
//
// The bandwidth h is Silverman's rule of thumb (Silverman 1986, Density
// Estimation, eq. 3.31): h = 0.9 · min(σ̂, IQR/1.34) · n^(−1/5), with σ̂
// alone when the interquartile range is 0 and h = 1e-9·max(1, |median|)
// when all samples are equal. The
// estimate is computed by linear binning onto a grid of spacing at most
// h/4 and a discrete convolution (Wand 1994, J. Comput. Graph. Stat.
// 3:433), whose relative error is O((spacing/h)²), then interpolated onto
// the output grid; when that grid would need more than MaxGridPoints
// points, the kernel sum (truncated at 6h) is evaluated exactly.
func KDE(samples []float64, points int) (*Density, error) {
	if err := checkSamples(samples); err != nil {
		return nil, err
	}
	if points == 0 {
		points = DefaultGridPoints
	}
	if points < 2 || points > MaxGridPoints {
		return nil, fmt.Errorf("KDE with %d grid points, want 2…%d", points, MaxGridPoints)
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	return kdeSorted(samples, sorted, points), nil
}

func checkSamples(samples []float64) error {
	if len(samples) < 2 {
		return fmt.Errorf("%d samples, want at least 2", len(samples))
	}
	for i, v := range samples {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("sample %d = %v is not finite", i+1, v)
		}
	}
	return nil
}

// quantile returns the q-quantile of sorted samples by linear
// interpolation between order statistics.
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	return sorted[i]*(1-f) + sorted[i+1]*f
}

// meanSD returns the mean and the sample standard deviation (divisor n−1).
func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var ss float64
	for _, v := range x {
		d := v - mean
		ss += d * d
	}
	return mean, math.Sqrt(ss / float64(len(x)-1))
}

// silverman returns the bandwidth of KDE.
func silverman(samples, sorted []float64) float64 {
	n := float64(len(sorted))
	_, sd := meanSD(samples)
	iqr := quantile(sorted, 0.75) - quantile(sorted, 0.25)
	s := sd
	if iqr > 0 {
		s = math.Min(sd, iqr/1.34)
	}
	h := 0.9 * s * math.Pow(n, -0.2)
	if !(h > 0) {
		h = 1e-9 * math.Max(1, math.Abs(quantile(sorted, 0.5)))
	}
	return h
}

// kdeSorted computes KDE from the samples and a sorted copy.
func kdeSorted(samples, sorted []float64, points int) *Density {
	n := len(sorted)
	h := silverman(samples, sorted)
	lo, hi := sorted[0]-4*h, sorted[n-1]+4*h
	d := &Density{X: make([]float64, points), P: make([]float64, points), Bandwidth: h}
	dx := (hi - lo) / float64(points-1)
	for j := range d.X {
		d.X[j] = lo + float64(j)*dx
	}
	norm := 1 / (float64(n) * h * math.Sqrt(2*math.Pi))
	// The binned estimate is computed on a grid fine enough for linear
	// binning (spacing ≤ h/4) and interpolated linearly onto the output
	// grid; when that grid would be too large, the kernel sum is exact.
	fine := max(points, int(math.Ceil(4*(hi-lo)/h))+1)
	if fine > MaxGridPoints {
		for _, x := range sorted {
			j0 := max(0, int(math.Ceil((x-6*h-lo)/dx)))
			j1 := min(points-1, int(math.Floor((x+6*h-lo)/dx)))
			for j := j0; j <= j1; j++ {
				t := (d.X[j] - x) / h
				d.P[j] += norm * math.Exp(-0.5*t*t)
			}
		}
		return d
	}
	fdx := (hi - lo) / float64(fine-1)
	// Linear binning: each sample's unit mass is split between its two
	// neighbouring grid points in proportion to closeness.
	w := make([]float64, fine)
	for _, x := range sorted {
		pos := (x - lo) / fdx
		k := min(int(pos), fine-2)
		f := pos - float64(k)
		w[k] += 1 - f
		w[k+1] += f
	}
	nk := min(fine-1, int(math.Ceil(6*h/fdx)))
	kern := make([]float64, nk+1)
	for l := range kern {
		t := float64(l) * fdx / h
		kern[l] = norm * math.Exp(-0.5*t*t)
	}
	p := make([]float64, fine)
	for k, wk := range w {
		if wk == 0 {
			continue
		}
		for j := max(0, k-nk); j <= min(fine-1, k+nk); j++ {
			l := j - k
			if l < 0 {
				l = -l
			}
			p[j] += wk * kern[l]
		}
	}
	if fine == points {
		copy(d.P, p)
		return d
	}
	for j, x := range d.X {
		pos := (x - lo) / fdx
		k := min(int(pos), fine-2)
		f := pos - float64(k)
		d.P[j] = (1-f)*p[k] + f*p[k+1]
	}
	return d
}

// NewHistogram returns the normalised histogram of the samples with the
// given number of equal bins over [min, max], or, for bins ≤ 0, with the
// Freedman–Diaconis bin width 2·IQR·n^(−1/3) (Freedman & Diaconis 1981),
// capped at MaxBins bins.
func NewHistogram(samples []float64, bins int) (*Histogram, error) {
	if err := checkSamples(samples); err != nil {
		return nil, err
	}
	if bins > MaxBins {
		return nil, fmt.Errorf("%d bins, want at most %d", bins, MaxBins)
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	return histSorted(sorted, bins), nil
}

func fdBins(sorted []float64) int {
	n := len(sorted)
	width := 2 * (quantile(sorted, 0.75) - quantile(sorted, 0.25)) * math.Pow(float64(n), -1.0/3)
	r := sorted[n-1] - sorted[0]
	if !(width > 0) || !(r > 0) {
		return 1
	}
	return int(min(MaxBins, math.Max(1, math.Ceil(r/width))))
}

func histSorted(sorted []float64, bins int) *Histogram {
	n := len(sorted)
	if bins <= 0 {
		bins = fdBins(sorted)
	}
	lo, hi := sorted[0], sorted[n-1]
	if !(hi > lo) {
		// All samples equal: one bin of width 1e-9·max(1,|x|) around them.
		w := 1e-9 * math.Max(1, math.Abs(lo))
		lo, hi, bins = lo-w/2, lo+w/2, 1
	}
	h := &Histogram{Edges: make([]float64, bins+1), Density: make([]float64, bins)}
	width := (hi - lo) / float64(bins)
	for b := range h.Edges {
		h.Edges[b] = lo + float64(b)*width
	}
	h.Edges[bins] = hi
	for _, x := range sorted {
		b := min(bins-1, int((x-lo)/width))
		h.Density[b]++
	}
	for b := range h.Density {
		h.Density[b] /= float64(n) * (h.Edges[b+1] - h.Edges[b])
	}
	return h
}

// Gaussian is a univariate normal distribution.
type Gaussian struct {
	Mean float64 `json:"mean"`
	Var  float64 `json:"var"`
}

// Distance measures how far a Gaussian is from the distribution of a set
// of samples. Each estimate comes with its Monte Carlo standard error
// (the *SE fields). Errors are sample minus Gaussian.
type Distance struct {
	// MeanError is the sample mean minus the Gaussian's mean; its standard
	// error is sd/√n.
	MeanError   float64 `json:"mean_error"`
	MeanErrorSE float64 `json:"mean_error_se"`
	// VarError is the unbiased sample variance minus the Gaussian's
	// variance; its standard error uses the sample fourth moment.
	VarError   float64 `json:"var_error"`
	VarErrorSE float64 `json:"var_error_se"`
	// KL is KL(p̂ ‖ N), the Kullback–Leibler divergence from the Gaussian
	// to the Freedman–Diaconis histogram p̂ of the samples, computed bin by
	// bin with the Gaussian's probability q_b of each bin (the end bins
	// extended to ±∞): Σ_b p_b log(p_b/q_b). It is biased upwards by about
	// (bins−1)/(2n). Its standard error is the delta method's:
	// √((Σ p_b L_b² − (Σ p_b L_b)²)/n) with L_b = log(p_b/q_b).
	KL   float64 `json:"kl"`
	KLSE float64 `json:"kl_se"`
	// W1 is the Wasserstein-1 distance ∫|F̂(t) − Φ((t−μ)/σ)| dt between the
	// samples' empirical distribution and the Gaussian, computed exactly.
	// Its standard error is the delta method's: the standard deviation over
	// the samples of the influence function ψ(x) = ∫_x^∞ sign(F̂ − Φ) dt,
	// divided by √n. Where the Gaussian is right (W1 of order σ/√n) it
	// only indicates the order of the noise.
	W1   float64 `json:"w1"`
	W1SE float64 `json:"w1_se"`
	// Bins is the number of histogram bins used for KL.
	Bins int `json:"bins"`
}

// Compare returns the distances between the samples and the Gaussian g.
func Compare(samples []float64, g Gaussian) (*Distance, error) {
	if err := checkSamples(samples); err != nil {
		return nil, err
	}
	if !(g.Var > 0) || math.IsInf(g.Var, 0) || math.IsNaN(g.Mean) || math.IsInf(g.Mean, 0) {
		return nil, fmt.Errorf("Gaussian N(%v, %v) needs a finite mean and a finite, positive variance", g.Mean, g.Var)
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	return compareSorted(samples, sorted, g), nil
}

func compareSorted(samples, sorted []float64, g Gaussian) *Distance {
	var a accum
	for _, v := range samples {
		a.add(v)
	}
	mean, vr, mse, vse := a.stats()
	d := &Distance{MeanError: mean - g.Mean, MeanErrorSE: mse, VarError: vr - g.Var, VarErrorSE: vse}
	sd := math.Sqrt(g.Var)
	d.W1, d.W1SE = w1Sorted(sorted, g.Mean, sd)
	hist := histSorted(sorted, 0)
	d.Bins = len(hist.Density)
	d.KL, d.KLSE = klHist(hist.Edges, sorted, g.Mean, sd)
	return d
}

// normCDF returns Φ(z).
func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// normPDF returns φ(z).
func normPDF(z float64) float64 { return math.Exp(-0.5*z*z) / math.Sqrt(2*math.Pi) }

// w1Sorted returns ∫|F̂(t) − Φ((t−m)/σ)| dt for sorted samples and its
// standard error. Between consecutive order statistics F̂ is the constant
// c = i/n, and with the antiderivative G(t) = σ(zΦ(z) + φ(z)) of Φ the
// integral of |c − Φ| over each interval is exact, split where Φ crosses
// c. The same pass accumulates, from the right, the influence function
// ψ(x_i) = ∫_{x_i}^{x_n} sign(F̂ − Φ) dt (up to a constant).
func w1Sorted(x []float64, m, sd float64) (w1, se float64) {
	n := len(x)
	G := func(z float64) float64 { return sd * (z*normCDF(z) + normPDF(z)) }
	z0 := (x[0] - m) / sd
	// (−∞, x_1): ∫Φ = G(x_1).
	w := G(z0)
	// signed[i] is ∫ sign(F̂ − Φ) over (x_i, x_{i+1}).
	signed := make([]float64, n)
	zPrev, phiPrev, gPrev := z0, normCDF(z0), w
	for i := 1; i < n; i++ {
		c := float64(i) / float64(n)
		z := (x[i] - m) / sd
		phi := normCDF(z)
		g := G(z)
		a, b := x[i-1], x[i]
		switch {
		case phi <= c:
			w += c*(b-a) - (g - gPrev)
			signed[i-1] = b - a
		case phiPrev >= c:
			w += (g - gPrev) - c*(b-a)
			signed[i-1] = a - b
		default:
			zs := math.Sqrt2 * math.Erfinv(2*c-1)
			ts := m + sd*zs
			gs := G(zs)
			w += c*(ts-a) - (gs - gPrev)
			w += (g - gs) - c*(b-ts)
			signed[i-1] = (ts - a) - (b - ts)
		}
		zPrev, phiPrev, gPrev = z, phi, g
	}
	// (x_n, ∞): ∫(1 − Φ) = σ(φ(z) − z(1 − Φ(z))).
	w += sd * (normPDF(zPrev) - zPrev*0.5*math.Erfc(zPrev/math.Sqrt2))

	var acc accum
	var psi float64
	for i := n - 1; i >= 0; i-- {
		psi += signed[i]
		acc.add(psi)
	}
	_, v, _, _ := acc.stats()
	return w, math.Sqrt(v / float64(n))
}

// gaussMass returns P(a ≤ X < b) for X ~ N(m, sd²), accurate in the tails.
func gaussMass(a, b, m, sd float64) float64 {
	za, zb := (a-m)/sd, (b-m)/sd
	if za > 0 {
		return 0.5 * (math.Erfc(za/math.Sqrt2) - math.Erfc(zb/math.Sqrt2))
	}
	return 0.5 * (math.Erfc(-zb/math.Sqrt2) - math.Erfc(-za/math.Sqrt2))
}

// klHist returns Σ_b p_b log(p_b/q_b) for the sorted samples binned with
// the given edges (samples outside the edges fall in the end bins), and
// its delta-method standard error. The
// end bins extend to ±∞ for the Gaussian, so that the q_b sum to 1. A bin
// whose Gaussian probability underflows counts with q_b = 1e-300.
func klHist(edges, sorted []float64, m, sd float64) (kl, se float64) {
	n := float64(len(sorted))
	bins := len(edges) - 1
	var l2 float64
	i := 0
	for b := 0; b < bins; b++ {
		cnt := 0
		for i < len(sorted) && (b == bins-1 || sorted[i] < edges[b+1]) {
			cnt++
			i++
		}
		if cnt == 0 {
			continue
		}
		p := float64(cnt) / n
		lo, hi := edges[b], edges[b+1]
		if b == 0 {
			lo = math.Inf(-1)
		}
		if b == bins-1 {
			hi = math.Inf(1)
		}
		q := math.Max(gaussMass(lo, hi, m, sd), 1e-300)
		l := math.Log(p / q)
		kl += p * l
		l2 += p * l * l
	}
	return kl, math.Sqrt(math.Max(l2-kl*kl, 0) / n)
}
