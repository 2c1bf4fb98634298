package view

import (
	"math"
	"strconv"

	"dgpviz/internal/engine"
	"dgpviz/internal/wire"

	"gonum.org/v1/gonum/mat"
)

// GridPoints is the number of points of every function grid in a frame.
const GridPoints = 64

// KernelFrame is a layer's kernel in a frame.
type KernelFrame struct {
	Name   string     `json:"name"`
	Names  []string   `json:"names"`
	Params []wire.Num `json:"params"`
}

// GridFrame is a 1-D-input layer's function on a grid of inputs.
type GridFrame struct {
	G       int      `json:"g"`
	X       wire.Ref `json:"x"`
	Mean    wire.Ref `json:"mean"`
	VarU    wire.Ref `json:"var_u"`
	VarCond wire.Ref `json:"var_cond"`
}

// LayerFrame is one layer in a frame: its parameters, its terms of the
// bound, and the messages out of it (absent where a view leaves them out).
type LayerFrame struct {
	Q                   int         `json:"q"`
	D                   int         `json:"d"`
	M                   int         `json:"m"`
	Kernel              KernelFrame `json:"kernel"`
	Noise               wire.Num    `json:"noise"`
	KL                  *wire.Num   `json:"kl,omitempty"`
	Compression         *wire.Num   `json:"compression,omitempty"`
	Propagation         *wire.Num   `json:"propagation,omitempty"`
	Mean                *wire.Ref   `json:"mean,omitempty"`
	Var                 *wire.Ref   `json:"var,omitempty"`
	CompressionPerDatum *wire.Ref   `json:"comp,omitempty"`
	PropagationPerDatum *wire.Ref   `json:"prop,omitempty"`
	Z                   wire.Ref    `json:"z"`
	UMean               wire.Ref    `json:"u_mean"`
	UVar                wire.Ref    `json:"u_var"`
	Grid                *GridFrame  `json:"grid,omitempty"`
}

// LayerParams fills a layer's frame with what depends on its parameters
// alone: shapes, kernel, noise, inducing inputs and the q(u) marginals
// (mean m, variance diag(L Lᵀ)). Arrays of more than maxArray values (0:
// no limit) are sent empty, and named in omitted as "z" or "u_mean" and
// "u_var": a view of 560-D images draws neither the encoder's inducing
// inputs nor the decoder's inducing outputs.
func LayerParams(e *wire.Encoder, l *engine.Layer, maxArray int) (lf LayerFrame, omitted []string) {
	mz, q, d := l.Dims()
	lf = LayerFrame{
		Q: q, D: d, M: mz, Noise: wire.Num(l.NoiseVariance),
		Kernel: KernelFrame{Name: l.Kernel.Name(), Names: l.Kernel.ParamNames(), Params: wire.Nums(l.Kernel.Params())},
	}
	fits := func(n int) bool { return maxArray <= 0 || n <= maxArray }
	if fits(mz * q) {
		lf.Z = e.Arr(DenseData(l.InducingInputs))
	} else {
		lf.Z = e.Arr(nil)
		omitted = append(omitted, "z")
	}
	if fits(mz * d) {
		lf.UMean = e.Arr(DenseData(l.QMu))
		lf.UVar = e.Arr(l.InducingMarginals())
	} else {
		lf.UMean, lf.UVar = e.Arr(nil), e.Arr(nil)
		omitted = append(omitted, "u_mean", "u_var")
	}
	return lf, omitted
}

// SetTerms adds the layer's terms of the bound and, perDatum, its
// penalties for every datum.
func (lf *LayerFrame) SetTerms(e *wire.Encoder, t engine.LayerTerms, perDatum bool) {
	lf.KL, lf.Compression, lf.Propagation = wire.NumPtr(t.KL), wire.NumPtr(t.Compression), wire.NumPtr(t.Propagation)
	if perDatum {
		comp, prop := e.Arr(t.CompressionPerDatum), e.Arr(t.PropagationPerDatum)
		lf.CompressionPerDatum, lf.PropagationPerDatum = &comp, &prop
	}
}

// SetMessage adds the message out of the layer (mean and variance, N × D).
func (lf *LayerFrame) SetMessage(e *wire.Encoder, m engine.Message) {
	mean := e.Arr(DenseData(m.Mean))
	lf.Mean = &mean
	if m.Var != nil {
		vr := e.Arr(DenseData(m.Var))
		lf.Var = &vr
	}
}

// LayerOptions say what BaseLayers leaves out.
type LayerOptions struct {
	// MaxArray: inducing arrays of more values are left out (0: none is).
	MaxArray int
	// NoPerDatum leaves out the penalties of every datum (the totals stay).
	NoPerDatum bool
}

// BaseLayers returns every layer's frame from s: parameters (see
// LayerParams), terms and penalties from the optimizer's evaluation, and
// the hidden layers' messages from it. The output layer's message is the
// view's to add. omitted names the arrays left out as "layer.field",
// layers counted from 0 as in the frame.
func BaseLayers(e *wire.Encoder, s *Snapshot, o LayerOptions) (layers []LayerFrame, omitted []string) {
	for i, l := range s.Model.Layers {
		lf, om := LayerParams(e, l, o.MaxArray)
		for _, f := range om {
			omitted = append(omitted, strconv.Itoa(i)+"."+f)
		}
		if ev := s.Eval; ev != nil {
			if i < len(ev.Layers) {
				lf.SetTerms(e, ev.Layers[i], !o.NoPerDatum)
			}
			if i < len(ev.Hidden) {
				lf.SetMessage(e, ev.Hidden[i])
			}
		}
		layers = append(layers, lf)
	}
	return layers, omitted
}

// DenseData returns a's values row by row (a's own storage when it has no
// gaps).
func DenseData(a *mat.Dense) []float64 {
	r, c := a.Dims()
	raw := a.RawMatrix()
	if raw.Stride == c {
		return raw.Data[:r*c]
	}
	out := make([]float64, 0, r*c)
	for i := 0; i < r; i++ {
		out = append(out, raw.Data[i*raw.Stride:i*raw.Stride+c]...)
	}
	return out
}

// GridRange returns the range a 1-D-input layer's function is drawn over:
// its input messages' means ± 2 sd and its inducing inputs, widened by 5 %.
// inMean and inVar are the messages into layer i (nil for the first
// layer, whose inputs are the data's).
func GridRange(m *engine.Model, i int, inMean, inVar *mat.Dense) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	take := func(v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if i == 0 {
		for _, v := range DenseData(m.X) {
			take(v)
		}
	} else if inMean != nil && inVar != nil {
		mean, vr := DenseData(inMean), DenseData(inVar)
		for k := range mean {
			sd := math.Sqrt(math.Max(vr[k], 0))
			take(mean[k] - 2*sd)
			take(mean[k] + 2*sd)
		}
	}
	for _, v := range DenseData(m.Layers[i].InducingInputs) {
		take(v)
	}
	if lo > hi {
		return -1, 1
	}
	if hi-lo < 1e-6 {
		lo, hi = lo-0.5, hi+0.5
	}
	pad := 0.05 * (hi - lo)
	return lo - pad, hi + pad
}

// Linspace fills dst with len(dst) evenly spaced values from lo to hi.
func Linspace(dst []float64, lo, hi float64) []float64 {
	n := len(dst)
	for j := range dst {
		dst[j] = lo + (hi-lo)*float64(j)/float64(n-1)
	}
	return dst
}

// Grow returns s resized to n, reallocating only when it is too small.
func Grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// GridScratch is the scratch of Grid, kept between layers and frames.
type GridScratch struct {
	xs, mean, varU, varCond []float64
	fs                      engine.FunctionScratch
}

// Grid returns layer i's latent function on GridPoints inputs over its
// drawing range (engine.LayerPosterior.FunctionOn), or nil when its q(u)
// cannot be factorised. The layer must have 1-D inputs.
func Grid(e *wire.Encoder, m *engine.Model, i int, inMean, inVar *mat.Dense, sc *GridScratch) *GridFrame {
	l := m.Layers[i]
	_, _, d := l.Dims()
	p, err := engine.NewLayerPosterior(l, m.Jitter)
	if err != nil {
		return nil
	}
	lo, hi := GridRange(m, i, inMean, inVar)
	const g = GridPoints
	sc.xs = Grow(sc.xs, g)
	xs := Linspace(sc.xs, lo, hi)
	sc.mean, sc.varU, sc.varCond = Grow(sc.mean, g*d), Grow(sc.varU, g*d), Grow(sc.varCond, g)
	p.FunctionOn(xs, sc.mean, sc.varU, sc.varCond, &sc.fs)
	return &GridFrame{G: g, X: e.Arr(xs), Mean: e.Arr(sc.mean), VarU: e.Arr(sc.varU), VarCond: e.Arr(sc.varCond)}
}
