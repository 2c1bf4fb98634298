package montecarlo

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/linalg"
	"dgpviz/internal/plotkit"
	"dgpviz/internal/wire"
)

// GaussianInput is a Gaussian input N(Mean, Var) to a layer with a 1-D
// input.
type GaussianInput struct {
	Mean float64 `json:"mean"`
	Var  float64 `json:"var"`
}

// MaxFigureInputs bounds the number of inputs of a message figure.
const MaxFigureInputs = 16

// GPGridPoints is the number of input positions of FigureData.GP.
const GPGridPoints = 200

// FigureData is everything the message figure draws, for one layer with
// a 1-D input and output. It encodes to JSON as is (all numbers finite).
type FigureData struct {
	Layer   int    `json:"layer"` // 0-based
	Samples int    `json:"samples"`
	Seed    uint64 `json:"seed"`
	// NoiseVariance is the layer's σ²; the message variances include it,
	// the GP curve's SD does not.
	NoiseVariance float64 `json:"noise_variance"`
	// GP is the layer's latent function on a grid of input positions: the
	// mean under q(u) and the standard deviation from both q(u) and the
	// conditional of f given u (top right of the figure).
	GP plotkit.Curve `json:"gp"`
	// Inducing are the inducing variables: at each inducing input, the
	// mean and standard deviation of q(u_m) (the vertical bars).
	Inducing []InducingBar `json:"inducing"`
	// Inputs holds each input's response, in the order given.
	Inputs []InputResponse `json:"inputs"`
	// InputUnit and OutputUnit are the units of the input and output axes
	// when they are in the data's original units ("s", "dBm"; ToOriginal);
	// "" otherwise.
	InputUnit  string `json:"input_unit,omitempty"`
	OutputUnit string `json:"output_unit,omitempty"`
}

// InducingBar is one inducing variable u_m ~ N(Mean, SD²) at input Z.
type InducingBar struct {
	Z    float64 `json:"z"`
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
}

// InputResponse is a layer's response to one Gaussian input.
type InputResponse struct {
	Input GaussianInput `json:"input"`
	// Message is the Gaussian message out of the layer (noise included).
	Message Gaussian `json:"message"`
	// Compression and Propagation are the input's penalty terms.
	Compression float64 `json:"compression"`
	Propagation float64 `json:"propagation"`
	// True holds the exact mean and variance of the true response:
	// Var = Message.Var + 2σ²(Compression + Propagation).
	True Gaussian `json:"true"`
	// MC are the Monte Carlo moments of the true response.
	MC SampleMoments `json:"mc"`
	// Density is the kernel density estimate of the true response from
	// the samples (the solid line), and Histogram their histogram.
	Density   Density   `json:"density"`
	Histogram Histogram `json:"histogram"`
	// Distance measures how far Message is from the samples.
	Distance Distance `json:"distance"`
}

// SampleMoments are a sample's mean and variance with standard errors.
type SampleMoments struct {
	Mean   float64 `json:"mean"`
	MeanSE float64 `json:"mean_se"`
	Var    float64 `json:"var"`
	VarSE  float64 `json:"var_se"`
}

// figureLayer returns layer i of m prepared for the figure, which needs
// a 1-D input and output.
func figureLayer(m *engine.Model, layer int) (*Layer, error) {
	if m == nil {
		return nil, fmt.Errorf("nil model")
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if layer < 0 || layer >= len(m.Layers) {
		return nil, fmt.Errorf("layer %d out of range: the model has layers 1…%d", layer+1, len(m.Layers))
	}
	_, q, d := m.Layers[layer].Dims()
	if q != 1 || d != 1 {
		return nil, fmt.Errorf("layer %d has %d input and %d output dimensions; the message figure needs 1 and 1", layer+1, q, d)
	}
	l, err := NewLayer(m.Layers[layer], m.Jitter)
	if err != nil {
		return nil, fmt.Errorf("layer %d: %w", layer+1, err)
	}
	if l.kind == kindOther {
		return nil, fmt.Errorf("layer %d: kernel %q has no closed-form psi statistics", layer+1, l.kernel.Name())
	}
	return l, nil
}

// MessageFigure computes the data of the message figure: layer `layer`
// (0-based) of m, which must have a 1-D input and output, is given each
// Gaussian input; for each, samples draws of the true response (seeded
// by seed) give its density, moments and distances from the Gaussian
// message, next to the message and the two penalty terms. Errors report
// bad requests: a layer out of range or not 1-D, no or too many inputs,
// non-finite means, non-positive variances, or a sample count outside
// 2…MaxSamples.
func MessageFigure(m *engine.Model, layer int, inputs []GaussianInput, samples int, seed uint64) (*FigureData, error) {
	l, err := figureLayer(m, layer)
	if err != nil {
		return nil, err
	}
	if len(inputs) == 0 || len(inputs) > MaxFigureInputs {
		return nil, fmt.Errorf("%d inputs, want 1…%d", len(inputs), MaxFigureInputs)
	}
	for i, in := range inputs {
		if math.IsNaN(in.Mean) || math.IsInf(in.Mean, 0) {
			return nil, fmt.Errorf("input %d: mean %v is not finite", i+1, in.Mean)
		}
		if !(in.Var > 0) || math.IsInf(in.Var, 0) {
			return nil, fmt.Errorf("input %d: variance %v must be finite and > 0", i+1, in.Var)
		}
	}
	opt := Options{Samples: samples, Seed: seed}
	if err := opt.check(len(inputs)); err != nil {
		return nil, err
	}

	n := len(inputs)
	mu := make([]float64, n)
	s := make([]float64, n)
	for i, in := range inputs {
		mu[i], s[i] = in.Mean, in.Var
	}
	j := newJob([]*Layer{l}, mu, s, n, 1, opt)
	j.figureTable() // interpolated fast path (interp.go)
	j.store = [][]float64{make([]float64, n*samples)}
	j.run()

	fd := &FigureData{Layer: layer, Samples: samples, Seed: seed, NoiseVariance: l.noise, Inputs: make([]InputResponse, n)}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range inputs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = l.response(&fd.Inputs[i], inputs[i], j.store[0][i*samples:(i+1)*samples])
		}()
	}
	fd.Inducing = l.inducing()
	fd.GP = l.curve(figureRange(l, inputs), GPGridPoints)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i+1, err)
		}
	}
	return fd, nil
}

// response fills r from the samples of input in.
func (l *Layer) response(r *InputResponse, in GaussianInput, samples []float64) error {
	t := &InputTerms{Mean: make([]float64, 1), Var: make([]float64, 1), PropagationPerOutput: make([]float64, 1), TrueVar: make([]float64, 1)}
	if err := l.terms(t, []float64{in.Mean}, []float64{in.Var}, &termsWork{}); err != nil {
		return err
	}
	if err := checkSamples(samples); err != nil {
		return err
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	msg := Gaussian{Mean: t.Mean[0], Var: t.Var[0]}
	d := compareSorted(samples, sorted, msg)
	var a accum
	for _, v := range samples {
		a.add(v)
	}
	mean, vr, mse, vse := a.stats()
	*r = InputResponse{
		Input:       in,
		Message:     msg,
		Compression: t.Compression,
		Propagation: t.Propagation,
		True:        Gaussian{Mean: t.Mean[0], Var: t.TrueVar[0]},
		MC:          SampleMoments{Mean: mean, MeanSE: mse, Var: vr, VarSE: vse},
		Density:     *kdeSorted(samples, sorted, DefaultGridPoints),
		Histogram:   *histSorted(sorted, 0),
		Distance:    *d,
	}
	return nil
}

// inducing returns output 0's inducing variables.
func (l *Layer) inducing() []InducingBar {
	bars := make([]InducingBar, l.m)
	for i := range bars {
		bars[i] = InducingBar{Z: l.z[i*l.q], Mean: l.qmu[0][i], SD: l.qsd[0][i]}
	}
	return bars
}

// curve returns output 0 of the latent function on `points` positions of
// [lo, hi] for a layer with a 1-D input.
func (l *Layer) curve(r [2]float64, points int) plotkit.Curve {
	c := plotkit.Curve{X: make([]float64, points), Mean: make([]float64, points), SD: make([]float64, points)}
	kx, v := make([]float64, l.m), make([]float64, l.m)
	mean, varU := make([]float64, l.d), make([]float64, l.d)
	x := make([]float64, 1)
	for i := range c.X {
		x[0] = r[0] + (r[1]-r[0])*float64(i)/float64(points-1)
		vc := l.conditional(x, kx, v, mean, varU, true)
		c.X[i], c.Mean[i], c.SD[i] = x[0], mean[0], math.Sqrt(vc+varU[0])
	}
	return c
}

// figureRange is the input range of the GP panel: the inducing inputs and
// each input's mean ± 3 sd, padded by 5% on each side.
func figureRange(l *Layer, inputs []GaussianInput) [2]float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := 0; i < l.m; i++ {
		lo, hi = math.Min(lo, l.z[i*l.q]), math.Max(hi, l.z[i*l.q])
	}
	for _, in := range inputs {
		sd := math.Sqrt(in.Var)
		lo, hi = math.Min(lo, in.Mean-3*sd), math.Max(hi, in.Mean+3*sd)
	}
	return plotkit.Pad(lo, hi)
}

// Names of the input sets, the figure's teaching examples (a page's
// "presets"), in the order a page should list them.
const (
	InputSetFar      = "far from the inducing points"
	InputSetBend     = "across a bend"
	InputSetWell     = "well represented"
	InputSetPaper    = "the paper's figure"
	inputSetScanSize = 401
)

// InputSetInfo names an input set: Name as commands, URLs and InputSets
// use it, Key a short identifier for page elements.
type InputSetInfo struct{ Name, Key string }

// inputSets lists the input sets of InputSets in display order.
var inputSets = []InputSetInfo{{InputSetFar, "far"}, {InputSetBend, "bend"}, {InputSetWell, "well"}, {InputSetPaper, "paper"}}

// InputSetList returns the input sets of InputSets in display order.
func InputSetList() []InputSetInfo { return slices.Clone(inputSets) }

// InputSetNames returns the input sets' names in display order.
func InputSetNames() []string {
	out := make([]string, len(inputSets))
	for i, p := range inputSets {
		out[i] = p.Name
	}
	return out
}

// InputSets returns four Gaussian inputs for each input set, chosen
// by scanning the layer's per-input compression and propagation terms
// over positions around the inducing inputs and the layer's data inputs
// (the means of layer−1's messages at the model's data, or X itself for
// layer 0). Widths are in units of a length scale ℓ: the RBF lengthscale,
// or for a linear kernel a quarter of the input range.
//
//   - InputSetFar: sd ℓ/4, at the best-represented position and where the
//     compression term has risen 20%, 50% and 90% of the way to its
//     largest value beyond the outermost inducing input.
//   - InputSetBend: sd ℓ/4, at the largest local maxima of the propagation
//     term within the input range (at least ℓ/2 apart), filled up with
//     wider inputs (sd ℓ/2, 3ℓ/4, ℓ) at the largest.
//   - InputSetWell: sd ℓ/8, at the four positions within the input range
//     with the smallest compression + propagation, at least 1/8 of the
//     range apart.
//   - InputSetPaper: one of each: well represented (sd ℓ/8), across the
//     main bend (sd ℓ/4), far from the inducing points (sd ℓ/8), and a
//     wide input over the middle of the range (sd a quarter of the range).
func InputSets(m *engine.Model, layer int) (map[string][]GaussianInput, error) {
	l, err := figureLayer(m, layer)
	if err != nil {
		return nil, err
	}
	// The data inputs of the layer.
	var xs []float64
	if layer == 0 {
		xs = linalg.Flatten(nil, m.X)
	} else {
		var ev engine.Evaluator
		msgs, err := ev.Predict(m, m.X)
		if err != nil {
			return nil, err
		}
		xs = linalg.Flatten(nil, msgs[layer-1].Mean)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range xs {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	zlo, zhi := math.Inf(1), math.Inf(-1)
	for i := 0; i < l.m; i++ {
		zlo, zhi = math.Min(zlo, l.z[i]), math.Max(zhi, l.z[i])
	}
	lo, hi = math.Min(lo, zlo), math.Max(hi, zhi)
	if !(hi > lo) {
		lo, hi = lo-1, hi+1
	}
	ell := (hi - lo) / 4
	if l.kind == kindRBF {
		ell = math.Sqrt(0.5 / l.rbfH[0])
	}
	// A lengthscale far outside the inputs' range (1e16, say: a flat
	// function) would put every scanned position outside it, and one of
	// 1e300 makes the widths overflow: keep ℓ within [range/1000,
	// 10·range].
	if span := hi - lo; !(ell > 0) || math.IsInf(ell, 0) {
		ell = span / 4
	} else {
		ell = math.Min(math.Max(ell, span/1000), 10*span)
	}

	// Scan the terms over [lo − 3ℓ, hi + 3ℓ] at sd ℓ/4.
	sd0 := ell / 4
	type point struct{ x, comp, prop float64 }
	scan := make([]point, inputSetScanSize)
	t := &InputTerms{Mean: make([]float64, 1), Var: make([]float64, 1), PropagationPerOutput: make([]float64, 1), TrueVar: make([]float64, 1)}
	var w termsWork
	a, b := lo-3*ell, hi+3*ell
	for i := range scan {
		x := a + (b-a)*float64(i)/float64(len(scan)-1)
		if err := l.terms(t, []float64{x}, []float64{sd0 * sd0}, &w); err != nil {
			return nil, err
		}
		scan[i] = point{x, t.Compression, t.Propagation}
	}
	inRange := func(p point) bool { return p.x >= lo && p.x <= hi }
	in := func(x, sd float64) GaussianInput { return GaussianInput{Mean: x, Var: sd * sd} }

	// Well represented: the smallest compression + propagation in range,
	// spread out.
	idx := make([]int, 0, len(scan))
	for i, p := range scan {
		if inRange(p) {
			idx = append(idx, i)
		}
	}
	// Scores equal to 6 digits tie, and ties go to the smaller input: on a
	// symmetric fit, mirror-image inputs score the same but for rounding
	// (on the step model's ill-conditioned Kuu, 1e-9 apart, and moved by
	// 5e-9 between the engine's assembly and Go paths), and the choice
	// must not flip with it.
	sort.SliceStable(idx, func(i, j int) bool {
		pi, pj := scan[idx[i]], scan[idx[j]]
		return round6(pi.comp+pi.prop) < round6(pj.comp+pj.prop)
	})
	well := pickApart(idx, func(i int) float64 { return scan[i].x }, (hi-lo)/8, 4)
	var wellIn []GaussianInput
	for _, i := range well {
		wellIn = append(wellIn, in(scan[i].x, ell/8))
	}
	fill(&wellIn, 4, ell/8)

	// Across a bend: local maxima of propagation in range.
	var peaks []int
	for i := 1; i+1 < len(scan); i++ {
		if inRange(scan[i]) && scan[i].prop >= scan[i-1].prop && scan[i].prop > scan[i+1].prop {
			peaks = append(peaks, i)
		}
	}
	if len(peaks) == 0 && len(idx) > 0 {
		best := idx[0]
		for _, i := range idx {
			if scan[i].prop > scan[best].prop {
				best = i
			}
		}
		peaks = []int{best}
	}
	sort.SliceStable(peaks, func(i, j int) bool { return scan[peaks[i]].prop > scan[peaks[j]].prop })
	peaks = pickApart(peaks, func(i int) float64 { return scan[i].x }, ell/2, 4)
	var bend []GaussianInput
	for _, i := range peaks {
		bend = append(bend, in(scan[i].x, sd0))
	}
	if len(bend) == 0 { // no position in range to scan: the middle
		bend = append(bend, in((lo+hi)/2, sd0))
	}
	fill(&bend, 4, sd0)

	// Far: walk outwards from the outermost inducing input on the side
	// where the compression term grows most.
	cmin := math.Inf(1)
	for _, p := range scan {
		cmin = math.Min(cmin, p.comp)
	}
	side := func(right bool) (outer []point, cmax float64) {
		cmax = math.Inf(-1)
		for _, p := range scan {
			if (right && p.x > zhi) || (!right && p.x < zlo) {
				outer = append(outer, p)
				cmax = math.Max(cmax, p.comp)
			}
		}
		if !right {
			slices.Reverse(outer)
		}
		return outer, cmax
	}
	outer, cmax := side(true)
	// Ties (to 6 digits, as above) go to the right: on a symmetric fit the
	// two sides' maxima differ only by rounding.
	if lOuter, lmax := side(false); len(outer) == 0 || (len(lOuter) > 0 && round6(lmax) > round6(cmax)) {
		outer, cmax = lOuter, lmax
	}
	far := []GaussianInput{wellIn[0]}
	far[0].Var = sd0 * sd0
	for _, f := range []float64{0.2, 0.5, 0.9} {
		x := math.NaN()
		for _, p := range outer {
			if p.comp >= cmin+f*(cmax-cmin) {
				x = p.x
				break
			}
		}
		if math.IsNaN(x) && len(outer) > 0 {
			// The compression term does not grow (e.g. a linear kernel
			// with M ≥ Q): step out by multiples of ℓ instead.
			x = outer[0].x + ell*f*3
		}
		if math.IsNaN(x) {
			x = zhi + ell*f*3
		}
		far = append(far, in(x, sd0))
	}

	paper := []GaussianInput{wellIn[0], bend[0], in(far[3].Mean, ell/8), in((lo+hi)/2, (hi-lo)/4)}
	return map[string][]GaussianInput{InputSetFar: far, InputSetBend: bend, InputSetWell: wellIn, InputSetPaper: paper}, nil
}

// pickApart returns up to k of the candidates, in order, skipping any
// within sep of one already taken.
func pickApart(cands []int, pos func(int) float64, sep float64, k int) []int {
	var out []int
	for _, c := range cands {
		ok := true
		for _, o := range out {
			if math.Abs(pos(c)-pos(o)) < sep {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, c)
			if len(out) == k {
				break
			}
		}
	}
	return out
}

// fill pads ins to k inputs with wider copies of the first (or N(0, sd²)).
func fill(ins *[]GaussianInput, k int, sd float64) {
	if len(*ins) == 0 {
		*ins = append(*ins, GaussianInput{Mean: 0, Var: sd * sd})
	}
	for f := 2.0; len(*ins) < k; f++ {
		*ins = append(*ins, GaussianInput{Mean: (*ins)[0].Mean, Var: sd * sd * f * f})
	}
}

// round6 rounds v to 6 significant digits.
func round6(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// ParseGaussianInputs parses Gaussian inputs written as "μ:s²,μ:s²,…"
// (mean and variance, e.g. "0.5:0.01,1:0.2"): the one parser of the
// command line's -inputs and the figure downloads' URL. Means must be
// finite and variances finite and positive; callers add their own limits.
func ParseGaussianInputs(s string) ([]GaussianInput, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("no inputs: want mean:variance pairs separated by commas, e.g. 0.5:0.01")
	}
	var out []GaussianInput
	for i, part := range strings.Split(s, ",") {
		ms, vs, ok := strings.Cut(strings.TrimSpace(part), ":")
		m, err1 := strconv.ParseFloat(strings.TrimSpace(ms), 64)
		v, err2 := strconv.ParseFloat(strings.TrimSpace(vs), 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("input %d %q: want mean:variance, e.g. 0.5:0.01", i+1, wire.Truncate(part, 40))
		}
		if math.IsNaN(m) || math.IsInf(m, 0) {
			return nil, fmt.Errorf("input %d: mean %v is not finite", i+1, m)
		}
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("input %d: variance %v must be finite and > 0", i+1, v)
		}
		out = append(out, GaussianInput{Mean: m, Var: v})
	}
	return out, nil
}

// FirstFigureLayer returns the first layer of m with a 1-D input and
// output, where the message figure can be drawn (0 if none: drawing it then
// names the problem).
func FirstFigureLayer(m *engine.Model) int {
	for i, l := range m.Layers {
		if _, q, d := l.Dims(); q == 1 && d == 1 {
			return i
		}
	}
	return 0
}

// InputsToModel converts Gaussian inputs of layer (from 0) given in the
// figure's original units to the model's: the first layer's inputs by nx,
// as ToOriginal draws them; other layers' inputs are latent and stay. A
// multi-column or zero nx leaves them as they are.
func InputsToModel(ins []GaussianInput, nx dataset.Normalizer, layer int) []GaussianInput {
	if layer != 0 || len(nx.Scale) != 1 {
		return ins
	}
	a, b := nx.Scale[0], nx.Mean[0]
	out := make([]GaussianInput, len(ins))
	for i, in := range ins {
		out[i] = GaussianInput{Mean: (in.Mean - b) / a, Var: in.Var / (a * a)}
	}
	return out
}

// ToOriginal converts the figure, in place, to the data's original units
// where they apply: the first layer's input axis (by nx, labelled xUnit)
// and the last layer's output axis (by ny, labelled yUnit) of a model with
// the given number of layers; hidden layers have no units. A zero or
// multi-column Normalizer leaves its axis as it is.
func (fd *FigureData) ToOriginal(nx, ny dataset.Normalizer, layers int, xUnit, yUnit string) {
	layer := fd.Layer
	if layer == 0 && len(nx.Scale) == 1 {
		fd.InputUnit = xUnit
		a, b := nx.Scale[0], nx.Mean[0]
		for i := range fd.GP.X {
			fd.GP.X[i] = fd.GP.X[i]*a + b
		}
		for i := range fd.Inducing {
			fd.Inducing[i].Z = fd.Inducing[i].Z*a + b
		}
		for i := range fd.Inputs {
			in := &fd.Inputs[i].Input
			in.Mean, in.Var = in.Mean*a+b, in.Var*a*a
		}
	}
	if layer == layers-1 && len(ny.Scale) == 1 {
		fd.OutputUnit = yUnit
		a, b := ny.Scale[0], ny.Mean[0]
		for i := range fd.GP.Mean {
			fd.GP.Mean[i], fd.GP.SD[i] = fd.GP.Mean[i]*a+b, fd.GP.SD[i]*a
		}
		for i := range fd.Inducing {
			fd.Inducing[i].Mean, fd.Inducing[i].SD = fd.Inducing[i].Mean*a+b, fd.Inducing[i].SD*a
		}
		fd.NoiseVariance *= a * a
		for i := range fd.Inputs {
			r := &fd.Inputs[i]
			r.Message = Gaussian{Mean: r.Message.Mean*a + b, Var: r.Message.Var * a * a}
			r.True = Gaussian{Mean: r.True.Mean*a + b, Var: r.True.Var * a * a}
			r.MC.Mean, r.MC.MeanSE, r.MC.Var, r.MC.VarSE = r.MC.Mean*a+b, r.MC.MeanSE*a, r.MC.Var*a*a, r.MC.VarSE*a*a
			for k := range r.Density.X {
				r.Density.X[k], r.Density.P[k] = r.Density.X[k]*a+b, r.Density.P[k]/a
			}
			r.Density.Bandwidth *= a
			for k := range r.Histogram.Edges {
				r.Histogram.Edges[k] = r.Histogram.Edges[k]*a + b
			}
			for k := range r.Histogram.Density {
				r.Histogram.Density[k] /= a
			}
			r.Distance.W1, r.Distance.W1SE = r.Distance.W1*a, r.Distance.W1SE*a
			r.Distance.MeanError, r.Distance.MeanErrorSE = r.Distance.MeanError*a, r.Distance.MeanErrorSE*a
			r.Distance.VarError, r.Distance.VarErrorSE = r.Distance.VarError*a*a, r.Distance.VarErrorSE*a*a
		}
	}
}
