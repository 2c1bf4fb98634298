package regression

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/montecarlo"
	"dgpviz/internal/turn"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"
)

// The live message figure (the paper's figure of one layer's true response
// to a Gaussian input beside the Gaussian message): a worker of the
// session's recomputes montecarlo.MessageFigure for one layer and a few
// Gaussian inputs whenever the model or the inputs change, at most
// FigureRate times a second, and sends the result as a binary
// "message_figure" message. It starts with the first "message_figure"
// command and idles after "message_figure_off", so it never slows the
// optimizer. See docs/protocol.md, "Message figure".

// Limits of the message figure.
const (
	FigureMaxInputs      = 8      // Gaussian inputs of one figure
	FigureMinSamples     = 100    // samples per input
	FigureMaxSamples     = 100000 // samples per input
	FigureDefaultSamples = 20000
	FigureMaxVariance    = 1e4 // largest input variance (normalised units²)
	FigureRate           = 20  // at most this many figures per second
	figureSeed           = 1   // fixed: the Monte Carlo noise does not flicker between updates
)

// figureRequest is what the worker computes.
type figureRequest struct {
	layer    int
	inputs   []montecarlo.GaussianInput
	samples  int
	inputSet string // the input set that set the inputs, "" for a person's inputs
	applied  int64  // id of the command that set this request
}

// figureState is a session's message-figure request, shared by the
// optimizer goroutine (commands), the worker and downloads.
type figureState struct {
	mu      sync.Mutex
	req     *figureRequest // nil: off
	reqSeq  uint64
	started atomic.Bool
	notify  chan struct{} // capacity 1: the request changed
}

func (st *figureState) set(r *figureRequest) {
	st.mu.Lock()
	if st.notify == nil {
		st.notify = make(chan struct{}, 1)
	}
	st.req = r
	st.reqSeq++
	st.mu.Unlock()
	select {
	case st.notify <- struct{}{}:
	default:
	}
}

func (st *figureState) get() (*figureRequest, uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.req, st.reqSeq
}

// FigureRequest returns the live figure's layer (0-based), inputs and
// samples, for downloads of the figure the page shows; ok is false when
// the figure is off.
func (v *View) FigureRequest() (layer int, inputs []montecarlo.GaussianInput, samples int, ok bool) {
	r, _ := v.figure.get()
	if r == nil {
		return 0, nil, 0, false
	}
	return r.layer, slices.Clone(r.inputs), r.samples, true
}

// figureCommand applies message_figure, message_figure_preset and
// message_figure_off.
func (v *View) figureCommand(s view.Session, c wire.Command) (string, error) {
	st := &v.figure
	if c.Op == "message_figure_off" {
		st.set(nil)
		return "message figure off", nil
	}
	m := s.Model()
	cur, _ := st.get()
	req := &figureRequest{samples: FigureDefaultSamples, applied: c.ID}
	if cur != nil {
		req.layer, req.samples = cur.layer, cur.samples
	} else {
		req.layer = montecarlo.FirstFigureLayer(m)
	}
	if c.Layer != nil {
		req.layer = *c.Layer
	}
	if c.Samples != nil {
		if *c.Samples < FigureMinSamples || *c.Samples > FigureMaxSamples {
			return "", fmt.Errorf("message figure: %d samples is out of range %d…%d", *c.Samples, FigureMinSamples, FigureMaxSamples)
		}
		req.samples = *c.Samples
	}
	if err := CheckFigureLayer(m, req.layer); err != nil {
		return "", err
	}
	switch c.Op {
	case "message_figure":
		if c.Name != nil {
			return "", errors.New("message figure: unexpected \"name\" (use message_figure_preset)")
		}
		switch {
		case c.Inputs != nil:
			ins, err := checkFigureInputs(c.Inputs)
			if err != nil {
				return "", err
			}
			req.inputs = ins
		case cur != nil && cur.layer == req.layer:
			req.inputs, req.inputSet = cur.inputs, cur.inputSet
		default:
			ins, err := inputSetInputs(m, req.layer, montecarlo.InputSetPaper)
			if err != nil {
				return "", err
			}
			req.inputs, req.inputSet = ins, montecarlo.InputSetPaper
		}
	case "message_figure_preset":
		if c.Inputs != nil {
			return "", errors.New("message figure preset: unexpected \"inputs\" (use message_figure)")
		}
		if c.Name == nil {
			return "", fmt.Errorf("message figure preset: missing \"name\" (one of %q)", montecarlo.InputSetNames())
		}
		if !slices.Contains(montecarlo.InputSetNames(), *c.Name) {
			return "", fmt.Errorf("message figure preset: unknown name %q (one of %q)", wire.Truncate(*c.Name, 40), montecarlo.InputSetNames())
		}
		ins, err := inputSetInputs(m, req.layer, *c.Name)
		if err != nil {
			return "", err
		}
		req.inputs, req.inputSet = ins, *c.Name
	}
	st.set(req)
	if !st.started.Swap(true) {
		if err := s.Go("message_figure", func(ctx context.Context, send func([]byte)) { v.runFigure(ctx, s, send) }); err != nil {
			st.started.Store(false)
			return "", fmt.Errorf("message figure: %w", err)
		}
	}
	what := fmt.Sprintf("%d inputs", len(req.inputs))
	if req.inputSet != "" {
		what = fmt.Sprintf("preset %q", req.inputSet)
	}
	return fmt.Sprintf("message figure: layer %d, %s, %d samples each", req.layer+1, what, req.samples), nil
}

// CheckFigureLayer says why layer (0-based) of m cannot have the message
// figure, or nil: it needs a 1-D input, a 1-D output and an RBF kernel.
func CheckFigureLayer(m *engine.Model, layer int) error {
	if layer < 0 || layer >= len(m.Layers) {
		return fmt.Errorf("message figure: there is no layer %d (the model has layers 1…%d)", layer+1, len(m.Layers))
	}
	if _, q, d := m.Layers[layer].Dims(); q != 1 || d != 1 {
		return fmt.Errorf("message figure: layer %d has %d input and %d output dimensions; the figure needs 1 and 1", layer+1, q, d)
	}
	if m.Layers[layer].Kernel.Name() != "rbf" {
		return fmt.Errorf("message figure: layer %d has a %s kernel; the figure needs rbf", layer+1, m.Layers[layer].Kernel.Name())
	}
	return nil
}

// CheckFigureInputs checks Gaussian inputs of the message figure against
// the figure's limits (count, mean range, variance): the live panel's
// commands and the downloads' URLs alike.
func CheckFigureInputs(in []montecarlo.GaussianInput) error {
	fi := make([]wire.FigureInput, len(in))
	for i, g := range in {
		fi[i] = wire.FigureInput{Mean: g.Mean, Var: g.Var}
	}
	_, err := checkFigureInputs(fi)
	return err
}

func checkFigureInputs(in []wire.FigureInput) ([]montecarlo.GaussianInput, error) {
	if len(in) < 1 || len(in) > FigureMaxInputs {
		return nil, fmt.Errorf("message figure: %d inputs, want 1…%d", len(in), FigureMaxInputs)
	}
	out := make([]montecarlo.GaussianInput, len(in))
	for i, g := range in {
		if math.IsNaN(g.Mean) || math.Abs(g.Mean) > wire.MaxCoordinate {
			return nil, fmt.Errorf("message figure: input %d has mean %v, out of range [-%d, %d]", i+1, g.Mean, wire.MaxCoordinate, wire.MaxCoordinate)
		}
		if !(g.Var > 0) || g.Var > FigureMaxVariance {
			return nil, fmt.Errorf("message figure: input %d has variance %v; it must be > 0 and ≤ %g", i+1, g.Var, FigureMaxVariance)
		}
		out[i] = montecarlo.GaussianInput{Mean: g.Mean, Var: g.Var}
	}
	return out, nil
}

func inputSetInputs(m *engine.Model, layer int, name string) ([]montecarlo.GaussianInput, error) {
	ps, err := montecarlo.InputSets(m, layer)
	if err != nil {
		return nil, fmt.Errorf("message figure preset: %w", err)
	}
	return slices.Clone(ps[name]), nil
}

// runFigure is the session's message-figure worker: it computes the
// figure of the latest snapshot for the current request whenever either
// changes, at most FigureRate times a second and using at most a third
// of the wall time.
func (v *View) runFigure(ctx context.Context, s view.Session, send func([]byte)) {
	st := &v.figure
	var (
		last       time.Time
		doneV      uint64 // the snapshot version and request last computed
		doneR      uint64
		haveDone   bool
		seq        uint64
		lastErr    string // the error last reported, and for which request
		lastErrReq uint64
		interval   = time.Second / FigureRate
	)
	for {
		snap, changed := s.Latest()
		req, rseq := st.get()
		if req != nil && snap != nil && !(haveDone && snap.Version == doneV && rseq == doneR) {
			if wait := time.Until(last.Add(interval)); wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
				continue // the latest snapshot and request may have changed meanwhile
			}
			doneV, doneR, haveDone = snap.Version, rseq, true
			seq++
			var b []byte
			var err error
			// One turn of the server's cores, for work on all of them
			// (montecarlo samples on every core); the session's end
			// while it waits ends the worker.
			if turn.DoCores(ctx, runtime.GOMAXPROCS(0), func() {
				last = time.Now()
				b, err = figureMessage(snap, req, seq)
			}) != nil {
				return
			}
			interval = max(time.Second/FigureRate, 3*time.Since(last))
			switch {
			case err == nil:
				lastErr = ""
				send(b)
			case err.Error() != lastErr || rseq != lastErrReq: // once per request, not at every model update
				lastErr, lastErrReq = err.Error(), rseq
				send(encodeFigureError(snap, req, seq, err))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-st.notify:
		}
	}
}

// figureHeader is the binary "message_figure" message (docs/protocol.md).
type figureHeader struct {
	V        int            `json:"v"`
	Type     string         `json:"type"`
	Seq      uint64         `json:"seq"`
	Applied  int64          `json:"applied"`
	DataID   int            `json:"data_id"`
	Iter     int            `json:"iter"`
	Layer    int            `json:"layer"`
	Samples  int            `json:"samples"`
	Seed     uint64         `json:"seed"`
	InputSet string         `json:"preset"`
	Error    string         `json:"error,omitempty"`
	MS       wire.Num       `json:"ms"`
	Noise    wire.Num       `json:"noise"`
	GP       *mcGP          `json:"gp,omitempty"`
	Inducing *mcInducing    `json:"inducing,omitempty"`
	Inputs   []mcInputResp  `json:"inputs"`
	Sections []wire.Section `json:"sections"`
}

func (h *figureHeader) SetSections(s []wire.Section) { h.Sections = s }

type mcGP struct {
	G    int      `json:"g"`
	X    wire.Ref `json:"x"`
	Mean wire.Ref `json:"mean"`
	SD   wire.Ref `json:"sd"`
}

type mcInducing struct {
	M    int      `json:"m"`
	Z    wire.Ref `json:"z"`
	Mean wire.Ref `json:"mean"`
	SD   wire.Ref `json:"sd"`
}

type mcGauss struct {
	Mean wire.Num `json:"mean"`
	Var  wire.Num `json:"var"`
}

type mcInputResp struct {
	Mean        wire.Num `json:"mean"`
	Var         wire.Num `json:"var"`
	Message     mcGauss  `json:"message"`
	True        mcGauss  `json:"true"`
	MCMean      wire.Num `json:"mc_mean"`
	MCVar       wire.Num `json:"mc_var"`
	Compression wire.Num `json:"compression"`
	Propagation wire.Num `json:"propagation"`
	W1          wire.Num `json:"w1"`
	W1SE        wire.Num `json:"w1_se"`
	KL          wire.Num `json:"kl"`
	KLSE        wire.Num `json:"kl_se"`
	Density     mcDens   `json:"density"`
}

type mcDens struct {
	G int      `json:"g"`
	X wire.Ref `json:"x"`
	P wire.Ref `json:"p"`
}

func (r *figureRequest) header(s *view.Snapshot, seq uint64) *figureHeader {
	return &figureHeader{V: wire.Version, Type: "message_figure", Seq: seq, Applied: r.applied, DataID: s.Data.ID, Iter: s.Iter,
		Layer: r.layer, Samples: r.samples, Seed: figureSeed, InputSet: r.inputSet, Inputs: []mcInputResp{}}
}

// figureMessage computes the figure of s's model for req and encodes it.
func figureMessage(s *view.Snapshot, req *figureRequest, seq uint64) ([]byte, error) {
	t0 := time.Now()
	if err := CheckFigureLayer(s.Model, req.layer); err != nil {
		return nil, err
	}
	fd, err := montecarlo.MessageFigure(s.Model, req.layer, req.inputs, req.samples, figureSeed)
	if err != nil {
		return nil, fmt.Errorf("message figure: %w", err)
	}
	h := req.header(s, seq)
	h.MS = wire.Num(float64(time.Since(t0).Microseconds()) / 1000)
	var e wire.Encoder
	encodeFigure(&e, h, fd)
	return e.Finish(h)
}

// encodeFigure fills h's figure fields from fd.
func encodeFigure(e *wire.Encoder, h *figureHeader, fd *montecarlo.FigureData) {
	h.Noise = wire.Num(fd.NoiseVariance)
	h.GP = &mcGP{G: len(fd.GP.X), X: e.Arr(fd.GP.X), Mean: e.Arr(fd.GP.Mean), SD: e.Arr(fd.GP.SD)}
	z, mean, sd := make([]float64, len(fd.Inducing)), make([]float64, len(fd.Inducing)), make([]float64, len(fd.Inducing))
	for i, b := range fd.Inducing {
		z[i], mean[i], sd[i] = b.Z, b.Mean, b.SD
	}
	h.Inducing = &mcInducing{M: len(z), Z: e.Arr(z), Mean: e.Arr(mean), SD: e.Arr(sd)}
	n := func(v float64) wire.Num { return wire.Num(v) }
	for _, r := range fd.Inputs {
		h.Inputs = append(h.Inputs, mcInputResp{
			Mean: n(r.Input.Mean), Var: n(r.Input.Var),
			Message: mcGauss{n(r.Message.Mean), n(r.Message.Var)}, True: mcGauss{n(r.True.Mean), n(r.True.Var)},
			MCMean: n(r.MC.Mean), MCVar: n(r.MC.Var),
			Compression: n(r.Compression), Propagation: n(r.Propagation),
			W1: n(r.Distance.W1), W1SE: n(r.Distance.W1SE), KL: n(r.Distance.KL), KLSE: n(r.Distance.KLSE),
			Density: mcDens{G: len(r.Density.X), X: e.Arr(r.Density.X), P: e.Arr(r.Density.P)},
		})
	}
}

func encodeFigureError(s *view.Snapshot, req *figureRequest, seq uint64, err error) []byte {
	h := req.header(s, seq)
	h.Error = err.Error() // shown in the page
	var e wire.Encoder
	b, ferr := e.Finish(h)
	if ferr != nil { // cannot happen: the header has no arrays
		return nil
	}
	return b
}
