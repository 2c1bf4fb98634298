package montecarlo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"dgpviz/internal/engine"
	"dgpviz/internal/linalg"

	"gonum.org/v1/gonum/mat"
)

// ChunkSize is the number of samples drawn from one random stream. Chunks
// are the unit of parallel work and are reduced in order, so results
// depend on the seed but not on the number of goroutines.
const ChunkSize = 1024

// MaxSamples bounds the number of samples per input, and MaxTotalSamples
// the number of samples of one request over all its inputs, so that a
// mistaken request cannot run for hours or exhaust memory.
const (
	MaxSamples      = 1 << 24
	MaxTotalSamples = 1 << 32
)

// Options control sampling.
type Options struct {
	// Samples is the number of samples per input, 2…MaxSamples.
	Samples int
	// Seed selects the random streams; equal seeds give equal samples.
	Seed uint64
	// Workers is the number of goroutines; 0 means runtime.GOMAXPROCS(0).
	Workers int

	// NoConditional leaves out the conditional variance of f given u,
	// k(x,x) − k(x,Z)Kuu⁻¹k(Z,x): f(x) is then the GP mean given u.
	NoConditional bool
	// NoQSpread uses u = m, the mean of q(u), instead of u ~ q(u).
	NoQSpread bool
	// NoNoise leaves out the layer's noise.
	NoNoise bool
}

func (o *Options) check(inputs int) error {
	if o.Samples < 2 || o.Samples > MaxSamples {
		return fmt.Errorf("%d samples per input, want 2…%d", o.Samples, MaxSamples)
	}
	if o.Workers < 0 {
		return fmt.Errorf("%d workers, want ≥ 0", o.Workers)
	}
	if inputs < 1 {
		return fmt.Errorf("no inputs")
	}
	if total := float64(inputs) * float64(o.Samples); total > MaxTotalSamples {
		return fmt.Errorf("%d inputs × %d samples, more than the limit of %d samples", inputs, o.Samples, int64(MaxTotalSamples))
	}
	return nil
}

func (o *Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// Moments are Monte Carlo estimates, per input (row) and output (column),
// of the mean and variance of a distribution with their standard errors.
// Var is the unbiased sample variance; VarSE uses the sample fourth
// central moment: Var(s²) ≈ (μ4 − σ⁴(n−3)/(n−1))/n.
type Moments struct {
	Mean, Var, MeanSE, VarSE *mat.Dense
}

// plan is one layer's sampling matrices for a set of options: given a
// certain input x, output d is Gaussian with mean k(x,Z)·A_d and variance
// [k(x,x)] + k(x,Z) Q_d k(Z,x) [+ σ²], with Q_d = [−Kuu⁻¹] + [B_d] by the
// options. Q_d is stored packed: row i holds Q_ii, 2Q_i,i+1, …, 2Q_iM.
type plan struct {
	l      *Layer
	addKxx bool
	noise  float64
	quad   [][]float64 // D packed upper triangles, or nil when Q_d = 0
	tab    *hermite    // interpolation table of the message figure, or nil (interp.go)
}

func newPlan(l *Layer, opt *Options) *plan {
	p := &plan{l: l, addKxx: !opt.NoConditional}
	if !opt.NoNoise {
		p.noise = l.noise
	}
	if opt.NoConditional && opt.NoQSpread {
		return p
	}
	m := l.m
	for k := 0; k < l.d; k++ {
		q := make([]float64, 0, m*(m+1)/2)
		for i := 0; i < m; i++ {
			for j := i; j < m; j++ {
				var v float64
				if !opt.NoConditional {
					v -= l.kinv[i*m+j]
				}
				if !opt.NoQSpread {
					v += l.b[k][i*m+j]
				}
				if j > i {
					v *= 2
				}
				q = append(q, v)
			}
		}
		p.quad = append(p.quad, q)
	}
	return p
}

// draw writes one sample of every output given the certain input x to
// out, using scratch kx (length M). It does not allocate.
func (p *plan) draw(out, x, kx []float64, rng *rand.Rand) {
	if p.tab != nil && p.drawFast(out, x, rng) {
		return
	}
	l := p.l
	m := l.m
	kxx := l.crossCov(kx, x)
	for k := range out {
		a := l.a[k]
		var mean0, mean1 float64
		j := 0
		for ; j+1 < m; j += 2 {
			mean0 += kx[j] * a[j]
			mean1 += kx[j+1] * a[j+1]
		}
		if j < m {
			mean0 += kx[j] * a[j]
		}
		var v float64
		if p.addKxx {
			v = kxx
		}
		if p.quad != nil {
			v += packedQuad(kx, p.quad[k], m)
		}
		v = math.Max(v, 0) + p.noise
		out[k] = mean0 + mean1
		if v > 0 {
			out[k] += math.Sqrt(v) * rng.NormFloat64()
		}
	}
}

// packedQuad returns kᵀQk for Q packed as by newPlan.
func packedQuad(kx, q []float64, m int) float64 {
	var t float64
	off := 0
	for i := 0; i < m; i++ {
		row := q[off : off+m-i]
		ki := kx[i:m]
		var s0, s1 float64
		j := 0
		for ; j+1 < len(row); j += 2 {
			s0 += row[j] * ki[j]
			s1 += row[j+1] * ki[j+1]
		}
		if j < len(row) {
			s0 += row[j] * ki[j]
		}
		t += kx[i] * (s0 + s1)
		off += m - i
	}
	return t
}

// drawer is a sampler's per-goroutine workspace.
type drawer struct {
	x     []float64   // input sample
	kx    []float64   // M scratch
	out   [][]float64 // per layer: D outputs
	pcg   *rand.PCG
	rng   *rand.Rand
	plans []*plan
}

func newDrawer(plans []*plan, q0 int) *drawer {
	mMax := 0
	for _, p := range plans {
		mMax = max(mMax, p.l.m)
	}
	dr := &drawer{x: make([]float64, q0), kx: make([]float64, mMax), plans: plans}
	for _, p := range plans {
		dr.out = append(dr.out, make([]float64, p.l.d))
	}
	dr.pcg = rand.NewPCG(0, 0)
	dr.rng = rand.New(dr.pcg)
	return dr
}

// seed starts the random stream of work item `item`.
func (dr *drawer) seed(seed uint64, item int) {
	// The golden-ratio multiplier spreads consecutive items over the
	// second word of the PCG state.
	dr.pcg.Seed(seed, uint64(item)*0x9e3779b97f4a7c15+1)
}

// sample draws one sample of every layer of the chain for the input
// N(mu, diag s) (s nil: certain), writing layer i's output to dr.out[i].
func (dr *drawer) sample(mu, s []float64) {
	x := mu
	if s != nil {
		for r := range dr.x {
			dr.x[r] = mu[r] + math.Sqrt(s[r])*dr.rng.NormFloat64()
		}
		x = dr.x
	}
	for i, p := range dr.plans {
		out := dr.out[i]
		p.draw(out, x, dr.kx[:p.l.m], dr.rng)
		x = out
	}
}

// job is a batch of inputs pushed through a chain of layers.
type job struct {
	layers  []*Layer
	plans   []*plan
	n, q0   int
	mu, s   []float64 // n × q0 inputs; s nil for certain inputs
	opt     Options
	chunks  int         // chunks per input
	store   [][]float64 // per layer: n × samples × D, or nil
	acc     [][]accum   // per layer: (n·chunks) × D, or nil
	storeAt []bool      // which layers to store
}

func (j *job) run() {
	items := j.n * j.chunks
	workers := min(j.opt.workers(), items)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dr := newDrawer(j.plans, j.q0)
			for {
				it := int(next.Add(1) - 1)
				if it >= items {
					return
				}
				j.item(dr, it)
			}
		}()
	}
	wg.Wait()
}

func (j *job) item(dr *drawer, it int) {
	in, c := it/j.chunks, it%j.chunks
	lo, hi := c*ChunkSize, min(j.opt.Samples, (c+1)*ChunkSize)
	dr.seed(j.opt.Seed, it)
	mu := j.mu[in*j.q0 : (in+1)*j.q0]
	var s []float64
	if j.s != nil {
		s = j.s[in*j.q0 : (in+1)*j.q0]
	}
	for k := lo; k < hi; k++ {
		dr.sample(mu, s)
		for i, out := range dr.out {
			d := len(out)
			if j.store != nil && j.store[i] != nil {
				copy(j.store[i][(in*j.opt.Samples+k)*d:], out)
			}
			if j.acc != nil {
				a := j.acc[i][it*d : (it+1)*d]
				for r, v := range out {
					a[r].add(v)
				}
			}
		}
	}
}

func newJob(layers []*Layer, mu, s []float64, n, q0 int, opt Options) *job {
	j := &job{layers: layers, n: n, q0: q0, mu: mu, s: s, opt: opt,
		chunks: (opt.Samples + ChunkSize - 1) / ChunkSize}
	for _, l := range layers {
		j.plans = append(j.plans, newPlan(l, &j.opt))
	}
	return j
}

// moments reduces the per-chunk accumulators of layer i in order.
func (j *job) moments(i int) Moments {
	d := j.layers[i].d
	mo := Moments{Mean: mat.NewDense(j.n, d, nil), Var: mat.NewDense(j.n, d, nil),
		MeanSE: mat.NewDense(j.n, d, nil), VarSE: mat.NewDense(j.n, d, nil)}
	for in := 0; in < j.n; in++ {
		for r := 0; r < d; r++ {
			var a accum
			for c := 0; c < j.chunks; c++ {
				a.merge(&j.acc[i][(in*j.chunks+c)*d+r])
			}
			mean, vr, mse, vse := a.stats()
			mo.Mean.Set(in, r, mean)
			mo.Var.Set(in, r, vr)
			mo.MeanSE.Set(in, r, mse)
			mo.VarSE.Set(in, r, vse)
		}
	}
	return mo
}

// inputs checks and flattens N input means (N×Q) and variances (N×Q or
// nil for certain inputs).
func inputs(mu, s *mat.Dense, q int) (m, v []float64, n int, err error) {
	if mu == nil {
		return nil, nil, 0, fmt.Errorf("no input means")
	}
	n, c := mu.Dims()
	if c != q {
		return nil, nil, 0, fmt.Errorf("inputs have %d columns, the layer expects %d", c, q)
	}
	m = linalg.Flatten(nil, mu)
	for i, x := range m {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, nil, 0, fmt.Errorf("input mean of row %d, dimension %d = %v is not finite", i/q+1, i%q+1, x)
		}
	}
	if s != nil {
		if r, c := s.Dims(); r != n || c != q {
			return nil, nil, 0, fmt.Errorf("input variances are %d×%d, want %d×%d", r, c, n, q)
		}
		v = linalg.Flatten(nil, s)
		for i, x := range v {
			if !(x >= 0) || math.IsInf(x, 0) {
				return nil, nil, 0, fmt.Errorf("input variance of row %d, dimension %d = %v must be finite and ≥ 0", i/q+1, i%q+1, x)
			}
		}
	}
	return m, v, n, nil
}

// Sample draws opt.Samples samples of the layer's true response to the
// input N(mu, diag s) (s nil: a certain input) and returns them as a
// Samples × D matrix.
func (l *Layer) Sample(mu, s []float64, opt Options) (*mat.Dense, error) {
	if err := l.checkInput(mu, s); err != nil {
		return nil, err
	}
	if err := opt.check(1); err != nil {
		return nil, err
	}
	j := newJob([]*Layer{l}, mu, s, 1, l.q, opt)
	j.store = [][]float64{make([]float64, opt.Samples*l.d)}
	j.run()
	return mat.NewDense(opt.Samples, l.d, j.store[0]), nil
}

// Moments estimates the mean and variance of the layer's true response
// to each of the N inputs N(mu_n, diag s_n) (mu and s are N × Q; s nil
// for certain inputs) from opt.Samples samples each, without storing
// the samples.
func (l *Layer) Moments(mu, s *mat.Dense, opt Options) (*Moments, error) {
	m, v, n, err := inputs(mu, s, l.q)
	if err != nil {
		return nil, err
	}
	if err := opt.check(n); err != nil {
		return nil, err
	}
	j := newJob([]*Layer{l}, m, v, n, l.q, opt)
	j.acc = [][]accum{make([]accum, n*j.chunks*l.d)}
	j.run()
	mo := j.moments(0)
	return &mo, nil
}

// ModelLayers prepares every layer of a validated model.
func ModelLayers(m *engine.Model) ([]*Layer, error) {
	if m == nil {
		return nil, fmt.Errorf("nil model")
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	layers := make([]*Layer, len(m.Layers))
	for i, el := range m.Layers {
		l, err := NewLayer(el, m.Jitter)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i+1, err)
		}
		layers[i] = l
	}
	return layers, nil
}

// ChainMoments samples whole chains through the model from each row of x
// (N × Q(0), certain inputs) by ancestral sampling, layer by layer, and
// returns the Monte Carlo moments of every layer's true marginal (one
// Moments per layer, N × D(i) each).
func ChainMoments(m *engine.Model, x *mat.Dense, opt Options) ([]Moments, error) {
	layers, err := ModelLayers(m)
	if err != nil {
		return nil, err
	}
	mu, _, n, err := inputs(x, nil, layers[0].q)
	if err != nil {
		return nil, err
	}
	if err := opt.check(n); err != nil {
		return nil, err
	}
	j := newJob(layers, mu, nil, n, layers[0].q, opt)
	j.acc = make([][]accum, len(layers))
	for i, l := range layers {
		j.acc[i] = make([]accum, n*j.chunks*l.d)
	}
	j.run()
	out := make([]Moments, len(layers))
	for i := range layers {
		out[i] = j.moments(i)
	}
	return out, nil
}

// SampleChain draws opt.Samples chains through the model from the certain
// input x (length Q(0)) and returns every layer's samples, Samples × D(i).
func SampleChain(m *engine.Model, x []float64, opt Options) ([]*mat.Dense, error) {
	layers, err := ModelLayers(m)
	if err != nil {
		return nil, err
	}
	if err := layers[0].checkInput(x, nil); err != nil {
		return nil, err
	}
	if err := opt.check(1); err != nil {
		return nil, err
	}
	j := newJob(layers, x, nil, 1, layers[0].q, opt)
	j.store = make([][]float64, len(layers))
	for i, l := range layers {
		j.store[i] = make([]float64, opt.Samples*l.d)
	}
	j.run()
	out := make([]*mat.Dense, len(layers))
	for i, l := range layers {
		out[i] = mat.NewDense(opt.Samples, l.d, j.store[i])
	}
	return out, nil
}

// accum accumulates the count, mean and central moment sums M2, M3, M4 of
// a stream of values, updated and merged with the one-pass formulas of
// Pébay (2008), which are stable where raw power sums are not.
type accum struct {
	n                float64
	mean, m2, m3, m4 float64
}

func (a *accum) add(x float64) {
	n1 := a.n
	a.n++
	n := a.n
	delta := x - a.mean
	dn := delta / n
	dn2 := dn * dn
	t1 := delta * dn * n1
	a.mean += dn
	a.m4 += t1*dn2*(n*n-3*n+3) + 6*dn2*a.m2 - 4*dn*a.m3
	a.m3 += t1*dn*(n-2) - 3*dn*a.m2
	a.m2 += t1
}

func (a *accum) merge(b *accum) {
	if b.n == 0 {
		return
	}
	if a.n == 0 {
		*a = *b
		return
	}
	na, nb := a.n, b.n
	n := na + nb
	d := b.mean - a.mean
	d2 := d * d
	m2 := a.m2 + b.m2 + d2*na*nb/n
	m3 := a.m3 + b.m3 + d2*d*na*nb*(na-nb)/(n*n) + 3*d*(na*b.m2-nb*a.m2)/n
	m4 := a.m4 + b.m4 + d2*d2*na*nb*(na*na-na*nb+nb*nb)/(n*n*n) +
		6*d2*(na*na*b.m2+nb*nb*a.m2)/(n*n) + 4*d*(na*b.m3-nb*a.m3)/n
	a.n, a.mean, a.m2, a.m3, a.m4 = n, a.mean+d*nb/n, m2, m3, m4
}

// stats returns the mean, the unbiased variance and their standard errors.
func (a *accum) stats() (mean, vr, meanSE, varSE float64) {
	n := a.n
	if n < 2 {
		return a.mean, math.NaN(), math.NaN(), math.NaN()
	}
	vr = a.m2 / (n - 1)
	meanSE = math.Sqrt(vr / n)
	mu4 := a.m4 / n
	varSE = math.Sqrt(math.Max(mu4-vr*vr*(n-3)/(n-1), 0) / n)
	return a.mean, vr, meanSE, varSE
}
