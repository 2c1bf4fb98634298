package stream

import (
	"fmt"
	"math"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/train"

	"gonum.org/v1/gonum/mat"
)

// ProtocolVersion is the version of the websocket protocol in
// docs/protocol.md. It is sent in every message as "v"; a client that sees
// a different major version should not interpret the message.
const ProtocolVersion = 2 // 2: the message figure's ops and message are "message_figure…" (were "mc…")

// GridPoints is the number of points of every function grid in a frame.
const GridPoints = 64

// snapshot is what the optimizer goroutine hands to a connection's writer:
// a private copy of the model and the optimizer's state. The writer turns it
// into a frame, so the optimizer only pays for the copy.
type snapshot struct {
	model   *engine.Model
	iter    int
	event   string
	status  train.Status
	running bool
	ips     float64
	method  string
	lr      float64
	frozen  []string
	dataID  int
	applied int64      // id of the last command applied
	robot   *robotInfo // robot WiFi data: frames are built by robotFrame
	frey    *freyInfo  // the Frey faces: frames are built by freyFrame
	// eval is the optimizer's evaluation of model (nil: none at hand; the
	// Frey view only): its bound, terms and hidden layers' messages.
	eval      *train.Evaluation
	restarts  *restartSet
	restart   int // the restart the model started from
	followers int // read-only followers (follow.go)
}

type optState struct {
	Method       string   `json:"method"`
	LearningRate num      `json:"learning_rate"`
	Frozen       []string `json:"frozen"`
	Event        string   `json:"event"`
	Converged    bool     `json:"converged"`
	Status       string   `json:"status"` // train.Status in words: "not terminated", "gradient threshold", …
}

type kernelFrame struct {
	Name   string   `json:"name"`
	Names  []string `json:"names"`
	Params []num    `json:"params"`
}

type gridFrame struct {
	G       int `json:"g"`
	X       Ref `json:"x"`
	Mean    Ref `json:"mean"`
	VarU    Ref `json:"var_u"`
	VarCond Ref `json:"var_cond"`
}

type fitFrame struct {
	G    int `json:"g"`
	D    int `json:"d"`
	X    Ref `json:"x"`
	Mean Ref `json:"mean"`
	Var  Ref `json:"var"`
}

type layerFrame struct {
	Q           int         `json:"q"`
	D           int         `json:"d"`
	M           int         `json:"m"`
	Kernel      kernelFrame `json:"kernel"`
	Noise       num         `json:"noise"`
	KL          *num        `json:"kl,omitempty"`
	Compression *num        `json:"compression,omitempty"`
	Propagation *num        `json:"propagation,omitempty"`
	Mean        *Ref        `json:"mean,omitempty"`
	Var         *Ref        `json:"var,omitempty"`
	Comp        *Ref        `json:"comp,omitempty"`
	Prop        *Ref        `json:"prop,omitempty"`
	Z           Ref         `json:"z"`
	UMean       Ref         `json:"u_mean"`
	UVar        Ref         `json:"u_var"`
	Grid        *gridFrame  `json:"grid,omitempty"`
}

type frameHeader struct {
	V          int          `json:"v"`
	Type       string       `json:"type"`
	Seq        uint64       `json:"seq"`
	Applied    int64        `json:"applied"`
	DataID     int          `json:"data_id"`
	Iter       int          `json:"iter"`
	Running    bool         `json:"running"`
	IPS        num          `json:"ips"`
	Followers  int          `json:"followers"` // read-only followers watching (follow.go)
	Optimizer  optState     `json:"optimizer"`
	N          int          `json:"n"`
	Bound      *num         `json:"bound,omitempty"`
	Likelihood *num         `json:"likelihood,omitempty"`
	EvalError  string       `json:"eval_error,omitempty"`
	Layers     []layerFrame `json:"layers"`
	Fit        *fitFrame    `json:"fit,omitempty"`
	Robot      *robotFrame  `json:"robot,omitempty"`
	Frey       *freyFrame   `json:"frey,omitempty"`
	Sections   []section    `json:"sections"`
}

func (h *frameHeader) setSections(s []section) { h.Sections = s }

func numPtr(v float64) *num { n := num(v); return &n }

// newFramer returns a connection's framer, whose evaluator uses one
// worker: frames must not compete with the optimizer.
func newFramer() *framer {
	f := &framer{}
	f.ev.Workers = 1
	return f
}

// framer builds frames; it keeps an evaluator and scratch between frames
// and is used by one goroutine (make it with newFramer).
type framer struct {
	ev   engine.Evaluator // Workers 1: frames must not compete with the optimizer
	seq  uint64
	x    []float64
	cost time.Duration // smoothed time to build a frame
	rob  *robotFramer  // robot frames' state (robot_frame.go)
	fry  *robotFramer  // Frey frames' analyses (frey_frame.go)

	// grid scratch, reused between layers and frames (the encoder copies)
	xs, mean, varU, varCond []float64
	fs                      engine.FunctionScratch
}

// frame evaluates the snapshot's model and encodes the frame.
func (f *framer) frame(s *snapshot) ([]byte, error) {
	if s.robot != nil {
		return f.robotFrame(s)
	}
	if s.frey != nil {
		return f.freyFrame(s)
	}
	m := s.model
	_, q0 := m.X.Dims()
	h := f.header(s)
	var e encoder
	res, _, err := f.ev.Evaluate(m, engine.Options{OutputVariance: true})
	if err != nil {
		h.EvalError = err.Error()
		res = nil
	} else {
		h.Bound, h.Likelihood = numPtr(res.Bound), numPtr(res.Likelihood)
	}
	for i, l := range m.Layers {
		_, q, _ := l.Dims()
		lf := layerParams(&e, l)
		if res != nil {
			t := res.Layers[i]
			lf.KL, lf.Compression, lf.Propagation = numPtr(t.KL), numPtr(t.Compression), numPtr(t.Propagation)
			mean, vr := e.arr(res.Messages[i].Mean.RawMatrix().Data), e.arr(res.Messages[i].Var.RawMatrix().Data)
			comp, prop := e.arr(t.CompressionPerDatum), e.arr(t.PropagationPerDatum)
			lf.Mean, lf.Var, lf.Comp, lf.Prop = &mean, &vr, &comp, &prop
		}
		if q == 1 {
			lf.Grid = f.grid(&e, m, i, res)
		}
		h.Layers = append(h.Layers, lf)
	}
	if q0 == 1 {
		h.Fit = f.fit(&e, m)
	}
	return e.finish(h)
}

func denseData(a *mat.Dense) []float64 {
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

// gridRange returns the range a 1-D-input layer's function is drawn over:
// its input messages' means ± 2 sd and its inducing inputs, widened by 5 %.
func gridRange(m *engine.Model, i int, res *engine.Result) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	take := func(v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if i == 0 {
		for _, v := range denseData(m.X) {
			take(v)
		}
	} else if res != nil {
		mean, vr := res.Messages[i-1].Mean.RawMatrix().Data, res.Messages[i-1].Var.RawMatrix().Data
		for k := range mean {
			sd := math.Sqrt(math.Max(vr[k], 0))
			take(mean[k] - 2*sd)
			take(mean[k] + 2*sd)
		}
	}
	for _, v := range denseData(m.Layers[i].InducingInputs) {
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

func linspace(dst []float64, lo, hi float64) []float64 {
	n := len(dst)
	for j := range dst {
		dst[j] = lo + (hi-lo)*float64(j)/float64(n-1)
	}
	return dst
}

// grid evaluates layer i's latent function on GridPoints inputs over its
// drawing range (engine.LayerPosterior.FunctionOn).
func (f *framer) grid(e *encoder, m *engine.Model, i int, res *engine.Result) *gridFrame {
	l := m.Layers[i]
	_, _, d := l.Dims()
	p, err := engine.NewLayerPosterior(l, m.Jitter)
	if err != nil {
		return nil
	}
	lo, hi := gridRange(m, i, res)
	const g = GridPoints
	f.xs = grow(f.xs, g)
	xs := linspace(f.xs, lo, hi)
	mean, varU, varCond := grow(f.mean, g*d), grow(f.varU, g*d), grow(f.varCond, g)
	p.FunctionOn(xs, mean, varU, varCond, &f.fs)
	f.mean, f.varU, f.varCond = mean, varU, varCond
	return &gridFrame{G: g, X: e.arr(xs), Mean: e.arr(mean), VarU: e.arr(varU), VarCond: e.arr(varCond)}
}

// grow returns s resized to n, reallocating only when it is too small.
func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// fit predicts the whole network's output message on a grid over the data's
// 1-D input range.
func (f *framer) fit(e *encoder, m *engine.Model) *fitFrame {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range denseData(m.X) {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if !(hi > lo) {
		lo, hi = lo-1, hi+1
	}
	pad := 0.05 * (hi - lo)
	if len(f.x) != GridPoints {
		f.x = make([]float64, GridPoints)
	}
	xs := linspace(f.x, lo-pad, hi+pad)
	msgs, err := f.ev.Predict(m, mat.NewDense(GridPoints, 1, xs))
	if err != nil {
		return nil
	}
	last := msgs[len(msgs)-1]
	_, d := last.Mean.Dims()
	return &fitFrame{G: GridPoints, D: d, X: e.arr(xs), Mean: e.arr(last.Mean.RawMatrix().Data), Var: e.arr(last.Var.RawMatrix().Data)}
}

// errorf prefixes errors of this package.
func errorf(format string, args ...any) error {
	return fmt.Errorf("stream: "+format, args...)
}

// layerParams fills a layer's frame with what depends on its parameters
// alone: shapes, kernel, noise, inducing inputs and the q(u) marginals
// (mean m, variance diag(L Lᵀ)).
func layerParams(e *encoder, l *engine.Layer) layerFrame {
	return layerParamsSized(e, l, true, true)
}

// layerParamsSized is layerParams that encodes the inducing inputs only
// withZ and q(u)'s marginals only withU (the caller fills the others).
func layerParamsSized(e *encoder, l *engine.Layer, withZ, withU bool) layerFrame {
	mz, q, d := l.Dims()
	lf := layerFrame{
		Q: q, D: d, M: mz, Noise: num(l.NoiseVariance),
		Kernel: kernelFrame{Name: l.Kernel.Name(), Names: l.Kernel.ParamNames(), Params: nums(l.Kernel.Params())},
	}
	if withZ {
		lf.Z = e.arr(denseData(l.InducingInputs))
	}
	if withU {
		lf.UMean = e.arr(denseData(l.QMu))
		lf.UVar = e.arr(l.InducingMarginals())
	}
	return lf
}

// header starts the next frame's header from the snapshot: sequence,
// iteration and optimizer state.
func (f *framer) header(s *snapshot) *frameHeader {
	f.seq++
	n, _ := s.model.X.Dims()
	h := &frameHeader{
		V: ProtocolVersion, Type: "frame", Seq: f.seq, Applied: s.applied, DataID: s.dataID,
		Iter: s.iter, Running: s.running, IPS: num(s.ips), N: n, Followers: s.followers,
		Optimizer: optState{Method: s.method, LearningRate: num(s.lr), Frozen: s.frozen, Event: s.event, Converged: s.status.Converged(), Status: s.status.String()},
	}
	if h.Optimizer.Frozen == nil {
		h.Optimizer.Frozen = []string{}
	}
	return h
}
