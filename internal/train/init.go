package train

import (
	"dgpviz/internal/engine"
	"dgpviz/internal/linalg"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Initialisation defaults. Deep GPs fit only from a sensible start: hidden
// layers that carry signal (not collapsed), inducing inputs that cover each
// layer's input messages, and small hidden-layer noise.
const (
	// DefaultInducing is the inducing points per layer of `viz fit` and the
	// live page alike: on the step data 12 and 15 reach the same fits
	// (README), and 12 keeps the live frames quick.
	DefaultInducing    = 12
	DefaultHiddenNoise = 1e-2 // hidden noise variance / the layer's output variance; 1e-3 fitted the step data slower and worse (see optim_test.go)
	DefaultOutputNoise = 1e-2 // likelihood noise variance / var(Y)
	// DefaultPerturb is the perturbation scale FitRestarts uses for restarts
	// after the first.
	DefaultPerturb = 0.5
	kmeansIters    = 50 // Lloyd iterations; converges well before for ≤ 2000 centres in our tests
)

// InitConfig configures Initialize. Zero fields take the defaults.
type InitConfig struct {
	// Hidden lists the hidden-layer widths; empty means a one-layer GP.
	Hidden []int `json:"hidden"`
	// Inducing is the number of inducing points per layer (default 15),
	// capped at the number of data (and, for a linear kernel, at the
	// layer's input dimension, beyond which Kuu is singular).
	Inducing int `json:"inducing"`
	// OutputInducing, when not 0, is the final layer's number of inducing
	// points instead: an autoencoder's decoder, say, needs more than its
	// encoder.
	OutputInducing int `json:"output_inducing,omitempty"`
	// Kernel is every layer's kernel: "rbf" (default), "rbfiso" (one
	// shared lengthscale) or "linear".
	Kernel string `json:"kernel"`
	// InputKernel, when set, replaces Kernel for the first layer, e.g.
	// "rbfiso" on the 560 pixels of a face.
	InputKernel string `json:"input_kernel,omitempty"`
	// InputIsoStart starts the first layer's RBF lengthscales all at the
	// isotropic RBF's, √(Σ sd²), instead of each input's standard
	// deviation: on many inputs (a face's 560 pixels) the latter leave
	// every pair of data uncorrelated, exp(−½·~2Q).
	InputIsoStart bool `json:"input_iso_start,omitempty"`
	// Seed seeds k-means and the perturbations.
	Seed uint64 `json:"seed"`
	// HiddenNoise is the hidden layers' noise variance relative to the
	// variance of their initial outputs (default 1e-2).
	HiddenNoise float64 `json:"hidden_noise"`
	// OutputNoise is the last layer's noise variance relative to the
	// variance of Y (default 1e-2).
	OutputNoise float64 `json:"output_noise"`
	// HiddenInit chooses what the first hidden layer carries: "pca" (the
	// leading principal components of Y), "linear" (the inputs X, when the
	// widths match) or "auto" (default: linear when the widths match,
	// otherwise pca). Later hidden layers start as the identity of their
	// input (repeating or dropping columns when widths differ).
	HiddenInit string `json:"hidden_init"`
	// Jitter is the model's jitter (default DefaultJitter).
	Jitter float64 `json:"jitter"`
	// Perturb randomises the start for restarts: lengthscales are scaled
	// by exp(Perturb·ε/2), inducing inputs moved by Perturb·ε/10 input
	// standard deviations and the hidden layers' targets by Perturb·ε/10
	// of their standard deviation (ε standard normal). 0: no perturbation.
	Perturb float64 `json:"perturb"`
}

// withDefaults fills zero fields and checks the configuration.
func (c InitConfig) withDefaults() (InitConfig, error) {
	c.Hidden = slices.Clone(c.Hidden)
	if c.Inducing == 0 {
		c.Inducing = DefaultInducing
	}
	if c.Kernel == "" {
		c.Kernel = "rbf"
	}
	if c.HiddenNoise == 0 {
		c.HiddenNoise = DefaultHiddenNoise
	}
	if c.OutputNoise == 0 {
		c.OutputNoise = DefaultOutputNoise
	}
	if c.HiddenInit == "" {
		c.HiddenInit = "auto"
	}
	if c.Jitter == 0 {
		c.Jitter = engine.DefaultJitter
	}
	switch {
	case c.Inducing < 1 || c.Inducing > engine.MaxInducing:
		return c, fmt.Errorf("%d inducing points, want 1…%d", c.Inducing, engine.MaxInducing)
	case !validKernel(c.Kernel):
		return c, fmt.Errorf("kernel %q: want rbf, rbfiso or linear", c.Kernel)
	case c.InputKernel != "" && !validKernel(c.InputKernel):
		return c, fmt.Errorf("input kernel %q: want rbf, rbfiso or linear", c.InputKernel)
	case !finitePositive(c.HiddenNoise):
		return c, fmt.Errorf("hidden noise %v must be finite and > 0", c.HiddenNoise)
	case !finitePositive(c.OutputNoise):
		return c, fmt.Errorf("output noise %v must be finite and > 0", c.OutputNoise)
	case c.HiddenInit != "auto" && c.HiddenInit != "pca" && c.HiddenInit != "linear":
		return c, fmt.Errorf("hidden init %q: want auto, pca or linear", c.HiddenInit)
	case !finitePositive(c.Jitter):
		return c, fmt.Errorf("jitter %v must be finite and > 0", c.Jitter)
	case !(c.Perturb >= 0) || math.IsInf(c.Perturb, 0):
		return c, fmt.Errorf("perturbation %v must be finite and ≥ 0", c.Perturb)
	case len(c.Hidden)+1 > engine.MaxLayers:
		return c, fmt.Errorf("%d layers, more than the limit of %d layers", len(c.Hidden)+1, engine.MaxLayers)
	}
	for i, w := range c.Hidden {
		if w < 1 || w > engine.MaxDim {
			return c, fmt.Errorf("hidden layer %d: width %d, want 1…%d", i+1, w, engine.MaxDim)
		}
	}
	if c.OutputInducing < 0 || c.OutputInducing > engine.MaxInducing {
		return c, fmt.Errorf("%d inducing points in the final layer, want 1…%d", c.OutputInducing, engine.MaxInducing)
	}
	return c, nil
}

// Defaults returns c with its zero fields set to the defaults, or an error
// if c is invalid.
func (c InitConfig) Defaults() (InitConfig, error) { return c.withDefaults() }

// Initialize builds a deep GP for the data x (N×Q), y (N×D), which should
// already be normalised (columns with mean 0 and standard deviation 1).
// Layer by layer it
//   - places the inducing inputs at the quantiles (one-dimensional input)
//     or k-means centres (k-means++ seeding) of the layer's input messages;
//   - chooses the layer's target outputs: y for the last layer; for the
//     first hidden layer the leading principal components of y, or x when
//     the widths match (see HiddenInit); for later hidden layers their
//     input (near the identity), each scaled to unit variance;
//   - sets an RBF kernel's variance to the targets' variance and its
//     lengthscales to the input's standard deviations (an isotropic RBF's
//     one lengthscale to √(Σ sd²), see isoLengthscale; a linear kernel's
//     variances so that the output variance matches);
//   - sets q_mu to the sparse (DTC) regression of the targets on the inputs
//     at the inducing inputs and q_sqrt to the Cholesky factor of
//     r·Kuu, r the layer's relative noise (a confident q(u));
//   - propagates the input means through the layer's initial mean function,
//     giving the next layer's inputs.
//
// The model's data are x and y themselves, not copies: restarts of one
// data set share them.
func Initialize(x, y *mat.Dense, cfg InitConfig) (*engine.Model, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if x == nil || y == nil {
		return nil, fmt.Errorf("the model needs inputs and outputs")
	}
	n, q := x.Dims()
	ny, dy := y.Dims()
	if n != ny {
		return nil, fmt.Errorf("the inputs have %d rows but the outputs %d", n, ny)
	}
	if err := engine.CheckFinite(x, "inputs"); err != nil {
		return nil, fmt.Errorf("cannot start the model: %w", err)
	}
	if err := engine.CheckFinite(y, "outputs"); err != nil {
		return nil, fmt.Errorf("cannot start the model: %w", err)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5851f42d4c957f2d))
	widths := append(append([]int{q}, cfg.Hidden...), dy)
	nl := len(widths) - 1

	// The model shares x and y, which no model writes to, and the layers
	// read them in place (a million rows of the robot's shape are 248 MB).
	m := &engine.Model{Jitter: cfg.Jitter, X: x, Y: y}
	xs, ys := rowMajor(x), rowMajor(y)
	in := xs // the layer's input means, N×Q(i), read only
	for i := range nl {
		qi, di := widths[i], widths[i+1]
		last := i == nl-1
		var target []float64
		switch {
		case last:
			target = ys
		case i == 0 && cfg.FirstHiddenStart(q) == "linear":
			target = pickColumns(xs, n, q, di)
		case i == 0:
			target = principalComponents(ys, n, dy, di, xs, q)
		default:
			target = pickColumns(in, n, qi, di)
		}
		if !last {
			standardize(target, n, di)
			if cfg.Perturb > 0 {
				for k := range target {
					target[k] += 0.1 * cfg.Perturb * rng.NormFloat64()
				}
			}
		}
		ratio := cfg.HiddenNoise
		if last {
			ratio = cfg.OutputNoise
		}
		lcfg := cfg
		if i == 0 && cfg.InputKernel != "" {
			lcfg.Kernel = cfg.InputKernel
		}
		lcfg.InputIsoStart = i == 0 && cfg.InputIsoStart
		if last && cfg.OutputInducing > 0 {
			lcfg.Inducing = cfg.OutputInducing
		}
		l, err := initLayer(in, target, n, qi, di, lcfg, ratio, rng)
		if err != nil {
			return nil, fmt.Errorf("cannot start layer %d: %w", i+1, err)
		}
		m.Layers = append(m.Layers, l)
		if !last {
			in, err = layerMean(l, cfg.Jitter, in, n)
			if err != nil {
				return nil, fmt.Errorf("cannot start layer %d: %w", i+1, err)
			}
		}
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("cannot start the model: %w", err)
	}
	return m, nil
}

// initLayer builds one layer mapping inputs in (N×Q) to targets (N×D).
func initLayer(in, target []float64, n, q, d int, cfg InitConfig, ratio float64, rng *rand.Rand) (*engine.Layer, error) {
	sd := colStd(in, n, q)
	tv := meanColVar(target, n, d)
	if !(tv > 0) {
		tv = 1
	}
	mz := min(cfg.Inducing, n)
	var k engine.Kernel
	switch cfg.Kernel {
	case "linear":
		mz = min(mz, q)
		// Σ_j v_j E[x_j²] = tv with equal shares. A column that is (almost)
		// zero — a hidden layer's unused output, say — carries nothing to
		// share out: it gets the variance of a unit column, not tv/1e-12
		// (which once started a step model at a bound of −1.6e12).
		rms := linearScales(in, n, q)
		vs := make([]float64, q)
		for j := range vs {
			vs[j] = tv / (float64(q) * rms[j] * rms[j])
		}
		k = engine.NewLinear(vs)
	case "rbfiso":
		ls := isoLengthscale(sd)
		if cfg.Perturb > 0 {
			ls *= math.Exp(0.5 * cfg.Perturb * rng.NormFloat64())
		}
		k = engine.NewRBFIso(tv, ls, q)
	default:
		ls := make([]float64, q)
		iso := isoLengthscale(sd)
		for j := range ls {
			ls[j] = sd[j]
			if cfg.InputIsoStart {
				ls[j] = iso
			}
			if cfg.Perturb > 0 {
				ls[j] *= math.Exp(0.5 * cfg.Perturb * rng.NormFloat64())
			}
		}
		k = engine.NewRBF(tv, ls)
	}
	var z []float64
	switch {
	case cfg.Kernel == "linear":
		// A linear kernel's functions f(x) = wᵀx form a Q-dimensional
		// space, which any Q linearly independent inducing inputs
		// represent exactly (the compression term is then zero). The
		// coordinate axes at each input's RMS give a diagonal, well
		// conditioned Kuu whatever the data: quantiles or k-means centres
		// of standardised inputs sit near 0, where k(x, z) = 0, or on one
		// line when the inputs are collinear, and leave Kuu singular.
		rms := linearScales(in, n, q)
		z = make([]float64, mz*q)
		for r := 0; r < mz; r++ {
			z[r*q+r] = rms[r]
		}
	case q == 1:
		z = quantiles(in, mz)
	default:
		z = kmeans(in, n, q, mz, rng)
	}
	if cfg.Perturb > 0 {
		for r := 0; r < mz; r++ {
			for j := 0; j < q; j++ {
				z[r*q+j] += 0.1 * cfg.Perturb * sd[j] * rng.NormFloat64()
			}
		}
	}
	noise := ratio * tv
	kuu := make([]float64, mz*mz)
	engine.Cov(k, kuu, z, z)
	for i := 0; i < mz; i++ {
		kuu[i*mz+i] += cfg.Jitter * math.Max(1, tv)
	}
	qmu, err := dtcMean(k, kuu, in, target, z, n, q, d, mz, math.Max(noise, 1e-2*tv))
	if err != nil {
		return nil, err
	}
	// q_sqrt = chol(ratio·Kuu): a q(u) as confident, relative to the prior,
	// as the noise is small relative to the signal.
	lk := make([]float64, mz*mz)
	if !linalg.Cholesky(lk, kuu, mz) {
		return nil, fmt.Errorf("%w for the initial inducing inputs", engine.ErrNotPositiveDefinite)
	}
	l := &engine.Layer{Kernel: k, NoiseVariance: noise, InducingInputs: mat.NewDense(mz, q, z), QMu: mat.NewDense(mz, d, qmu)}
	for range d {
		s := mat.NewDense(mz, mz, nil)
		for r := 0; r < mz; r++ {
			for c := 0; c <= r; c++ {
				s.Set(r, c, math.Sqrt(ratio)*lk[r*mz+c])
			}
		}
		l.QSqrt = append(l.QSqrt, s)
	}
	return l, nil
}

// dtcMean returns the mean of u = f(Z) under the sparse (DTC) posterior of a
// GP regression of targets t (N×D) on inputs x with noise variance s2:
// Kuu (s2·Kuu + Kuf Kfu)⁻¹ Kuf t.
func dtcMean(k engine.Kernel, kuu, x, t, z []float64, n, q, d, m int, s2 float64) ([]float64, error) {
	kuf := mat.NewDense(m, n, nil)
	engine.Cov(k, kuf.RawMatrix().Data, z, x)
	var a mat.Dense
	a.Mul(kuf, kuf.T())
	av := a.RawMatrix().Data
	for i := range av {
		av[i] += s2 * kuu[i]
	}
	l := make([]float64, m*m)
	if !linalg.Cholesky(l, av, m) {
		return nil, fmt.Errorf("%w in the initial regression", engine.ErrNotPositiveDefinite)
	}
	var b mat.Dense
	b.Mul(kuf, mat.NewDense(n, d, t))
	sol := mat.NewDense(m, d, nil)
	col := make([]float64, m)
	for c := 0; c < d; c++ {
		mat.Col(col, c, &b)
		linalg.CholSolve(l, m, col)
		sol.SetCol(c, col)
	}
	var out mat.Dense
	out.Mul(mat.NewDense(m, m, kuu), sol)
	return out.RawMatrix().Data, nil
}

// layerMean returns the layer's mean function at the inputs x (N×Q):
// k(x, Z) Kuu⁻¹ q_mu.
func layerMean(l *engine.Layer, jitter float64, x []float64, n int) ([]float64, error) {
	p, err := engine.NewLayerPosterior(l, jitter)
	if err != nil {
		return nil, err
	}
	mz, _, _ := l.Dims()
	kx := mat.NewDense(n, mz, nil)
	engine.Cov(l.Kernel, kx.RawMatrix().Data, x, linalg.Flatten(nil, l.InducingInputs))
	var out mat.Dense
	out.Mul(kx, p.A)
	return out.RawMatrix().Data, nil
}

// rowMajor returns a's entries row by row: its own storage when its rows
// have no gaps, else a copy.
func rowMajor(a *mat.Dense) []float64 {
	if raw := a.RawMatrix(); raw.Stride == raw.Cols {
		return raw.Data[:raw.Rows*raw.Cols]
	}
	return linalg.Flatten(nil, a)
}

// pickColumns returns the N×D matrix whose column j is column j mod Q of a
// (N×Q).
func pickColumns(a []float64, n, q, d int) []float64 {
	out := make([]float64, n*d)
	for r := 0; r < n; r++ {
		for j := 0; j < d; j++ {
			out[r*d+j] = a[r*q+j%q]
		}
	}
	return out
}

// principalComponents returns the scores of y (N×Dy) on its leading d
// principal directions; columns beyond y's rank repeat the columns of x.
// Each direction's sign makes its largest loading positive, so the result
// does not depend on the SVD's sign convention.
func principalComponents(y []float64, n, dy, d int, x []float64, q int) []float64 {
	out, k := linalg.PrincipalScores(y, n, dy, d)
	for j := k; j < d; j++ { // no such component: an input column instead
		for r := 0; r < n; r++ {
			out[r*d+j] = x[r*q+j%q]
		}
	}
	return out
}

// standardize scales the columns of a (N×D) to mean 0 and standard
// deviation 1 (constant columns are only centred).
func standardize(a []float64, n, d int) {
	for j := 0; j < d; j++ {
		var mean, ss float64
		for r := 0; r < n; r++ {
			mean += a[r*d+j]
		}
		mean /= float64(n)
		for r := 0; r < n; r++ {
			a[r*d+j] -= mean
			ss += a[r*d+j] * a[r*d+j]
		}
		if sd := math.Sqrt(ss / float64(n)); sd > 0 {
			for r := 0; r < n; r++ {
				a[r*d+j] /= sd
			}
		}
	}
}

// colStd returns the standard deviations of the columns of a (N×Q), with 1
// in place of 0.
func colStd(a []float64, n, q int) []float64 {
	out := make([]float64, q)
	for j := 0; j < q; j++ {
		var mean, ss float64
		for r := 0; r < n; r++ {
			mean += a[r*q+j]
		}
		mean /= float64(n)
		for r := 0; r < n; r++ {
			ss += (a[r*q+j] - mean) * (a[r*q+j] - mean)
		}
		out[j] = math.Sqrt(ss / float64(n))
		if !(out[j] > 0) {
			out[j] = 1
		}
	}
	return out
}

// meanColVar returns the mean of the column variances of a (N×D).
func meanColVar(a []float64, n, d int) float64 {
	var v float64
	for _, s := range colStd(a, n, d) {
		v += s * s
	}
	return v / float64(d)
}

// quantiles returns m points at the (j+½)/m quantiles of the values a
// (linear interpolation between order statistics).
func quantiles(a []float64, m int) []float64 {
	s := slices.Clone(a)
	slices.Sort(s)
	n := len(s)
	out := make([]float64, m)
	for j := range out {
		p := (float64(j) + 0.5) / float64(m) * float64(n-1)
		i := int(p)
		f := p - float64(i)
		if i+1 < n {
			out[j] = s[i]*(1-f) + s[i+1]*f
		} else {
			out[j] = s[n-1]
		}
	}
	return out
}

// kmeans returns m centres of the rows of a (N×Q) by Lloyd's algorithm from
// a k-means++ seeding (Arthur & Vassilvitskii, 2007).
func kmeans(a []float64, n, q, m int, rng *rand.Rand) []float64 {
	c := make([]float64, m*q)
	d2 := make([]float64, n)
	first := rng.IntN(n)
	copy(c[:q], a[first*q:(first+1)*q])
	for i := range d2 {
		d2[i] = sqDist(a[i*q:(i+1)*q], c[:q])
	}
	for k := 1; k < m; k++ {
		var total float64
		for _, v := range d2 {
			total += v
		}
		pick := n - 1
		if total > 0 {
			u := rng.Float64() * total
			for i, v := range d2 {
				u -= v
				if u < 0 {
					pick = i
					break
				}
			}
		} else {
			pick = rng.IntN(n)
		}
		copy(c[k*q:(k+1)*q], a[pick*q:(pick+1)*q])
		for i := range d2 {
			d2[i] = math.Min(d2[i], sqDist(a[i*q:(i+1)*q], c[k*q:(k+1)*q]))
		}
	}
	assign := make([]int, n)
	sum := make([]float64, m*q)
	count := make([]int, m)
	for it := 0; it < kmeansIters; it++ {
		changed := false
		for i := 0; i < n; i++ {
			best, bd := 0, math.Inf(1)
			for k := 0; k < m; k++ {
				if dd := sqDist(a[i*q:(i+1)*q], c[k*q:(k+1)*q]); dd < bd {
					best, bd = k, dd
				}
			}
			if assign[i] != best || it == 0 {
				changed = changed || assign[i] != best
				assign[i] = best
			}
		}
		if !changed && it > 0 {
			break
		}
		clear(sum)
		clear(count)
		for i := 0; i < n; i++ {
			k := assign[i]
			count[k]++
			for j := 0; j < q; j++ {
				sum[k*q+j] += a[i*q+j]
			}
		}
		for k := 0; k < m; k++ {
			if count[k] == 0 {
				continue // an empty cluster keeps its centre
			}
			for j := 0; j < q; j++ {
				c[k*q+j] = sum[k*q+j] / float64(count[k])
			}
		}
	}
	return c
}

func sqDist(a, b []float64) float64 {
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}

// validKernel reports whether name is a kernel Initialize can build.
func validKernel(name string) bool { return name == "rbf" || name == "rbfiso" || name == "linear" }

// isoLengthscale is the initial lengthscale of an isotropic RBF on inputs
// with per-dimension standard deviations sd: √(Σ sd²), so that two inputs
// at the typical squared distance 2·Σ sd² have a correlation of e⁻¹.
func isoLengthscale(sd []float64) float64 {
	var s float64
	for _, v := range sd {
		s += v * v
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return 1
	}
	return math.Sqrt(s)
}

// finitePositive reports whether v is a positive finite number.
func finitePositive(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// linearScales returns the root mean square of each of the Q columns of in
// (N×Q), with (almost) zero columns — below 1e-6 of the largest, or all
// zero — given 1: the scale at which a linear kernel sees each input.
func linearScales(in []float64, n, q int) []float64 {
	rms := make([]float64, q)
	big := 0.0
	for j := range rms {
		var ms float64
		for r := 0; r < n; r++ {
			ms += in[r*q+j] * in[r*q+j]
		}
		rms[j] = math.Sqrt(ms / float64(max(n, 1)))
		big = math.Max(big, rms[j])
	}
	for j, v := range rms {
		if !(v > 1e-6*big) || math.IsInf(v, 0) {
			rms[j] = 1
		}
	}
	return rms
}

// FirstHiddenStart says what the first hidden layer of a model initialised
// with c on inputs of width q starts from, resolving "auto" as Initialize
// does: "linear" (the inputs) when the layer is as wide as the input,
// otherwise "pca" (the outputs' principal components).
func (c InitConfig) FirstHiddenStart(q int) string {
	if c.HiddenInit != "auto" && c.HiddenInit != "" {
		return c.HiddenInit
	}
	if len(c.Hidden) > 0 && c.Hidden[0] == q {
		return "linear"
	}
	return "pca"
}
