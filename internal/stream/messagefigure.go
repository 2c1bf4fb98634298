package stream

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/montecarlo"
)

// The live message figure (issue 5): a per-session Monte Carlo worker
// that recomputes montecarlo.MessageFigure for one layer and a few
// Gaussian inputs whenever the model or the inputs change, at most
// FigureRate times a second, and hands the result to the connection's writer
// through a latest-wins mailbox, like frames. It runs in its own
// goroutine, started by the first "message_figure" command and idle after "message_figure_off",
// so it never slows the optimizer beyond the model copy publish already
// makes. See docs/protocol.md, "Message figure".

// Limits of the mc commands.
const (
	FigureMaxInputs      = 8      // Gaussian inputs of one figure
	FigureMinSamples     = 100    // samples per input
	FigureMaxSamples     = 100000 // samples per input
	FigureDefaultSamples = 20000
	FigureMaxVariance    = 1e4 // largest input variance (normalised units²)
	FigureRate           = 20  // at most this many mc messages per second
	mcSeed               = 1   // fixed: the Monte Carlo noise does not flicker between updates
)

// FigureInput is one Gaussian input N(mean, var) of the message figure, in the
// layer's input units (normalised for layer 0).
type FigureInput struct {
	Mean float64 `json:"mean"`
	Var  float64 `json:"var"`
}

// figureRequest is what the worker computes.
type figureRequest struct {
	layer   int
	inputs  []montecarlo.GaussianInput
	samples int
	preset  string // the preset that set the inputs, "" for user inputs
	applied int64  // id of the mc command that set this request
}

// figureState is a session's message-figure state, shared by the optimizer
// goroutine (commands, published models), the mc worker and HTTP
// downloads; mu guards every field but key and out.
type figureState struct {
	key string           // unguessable session key for downloads (hello's "figure_key")
	out *mailbox[[]byte] // encoded mc messages → the writer

	mu       sync.Mutex
	model    *engine.Model // latest published model (a private, immutable copy)
	data     *data
	iter     int
	modelSeq uint64
	req      *figureRequest // nil: off
	reqSeq   uint64
	started  bool
	notify   chan struct{} // capacity 1: something changed
}

func newFigureState() *figureState {
	var b [16]byte
	rand.Read(b[:])
	return &figureState{key: hex.EncodeToString(b[:]), out: newMailbox[[]byte](), notify: make(chan struct{}, 1)}
}

func (st *figureState) poke() {
	select {
	case st.notify <- struct{}{}:
	default:
	}
}

// mcPublished records a newly published model for the worker and for
// downloads. Called by publish on the optimizer goroutine.
func (s *session) mcPublished(snap *snapshot) {
	st := s.figure
	if st == nil {
		return
	}
	st.mu.Lock()
	st.model, st.data, st.iter = snap.model, s.data, snap.iter
	st.modelSeq++
	on := st.req != nil
	st.mu.Unlock()
	if on {
		st.poke()
	}
}

// figureCommand applies mc, mc_preset and mc_off on the optimizer goroutine.
func (s *session) figureCommand(c Command) (string, error) {
	st := s.figure
	if c.Op == "message_figure_off" {
		st.mu.Lock()
		st.req = nil
		st.reqSeq++
		st.mu.Unlock()
		return "message figure off", nil
	}
	m := s.tr.Model()
	st.mu.Lock()
	cur := st.req
	st.mu.Unlock()
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
			return "", errorf("message figure: samples = %d out of range %d…%d", *c.Samples, FigureMinSamples, FigureMaxSamples)
		}
		req.samples = *c.Samples
	}
	if err := checkFigureLayer(c.Op, m, req.layer); err != nil {
		return "", err
	}
	switch c.Op {
	case "message_figure":
		if c.Name != nil {
			return "", errorf("message figure: unexpected \"name\" (use message_figure_preset)")
		}
		switch {
		case c.Inputs != nil:
			ins, err := checkFigureInputs(c.Inputs)
			if err != nil {
				return "", err
			}
			req.inputs = ins
		case cur != nil && cur.layer == req.layer:
			req.inputs, req.preset = cur.inputs, cur.preset
		default:
			ins, err := presetInputs(m, req.layer, montecarlo.PresetPaper)
			if err != nil {
				return "", err
			}
			req.inputs, req.preset = ins, montecarlo.PresetPaper
		}
	case "message_figure_preset":
		if c.Inputs != nil {
			return "", errorf("message figure preset: unexpected \"inputs\" (use message_figure)")
		}
		if c.Name == nil {
			return "", errorf("message figure preset: missing \"name\" (one of %q)", montecarlo.PresetNames())
		}
		if !slices.Contains(montecarlo.PresetNames(), *c.Name) {
			return "", errorf("message figure preset: unknown name %q (one of %q)", truncate(*c.Name, 40), montecarlo.PresetNames())
		}
		ins, err := presetInputs(m, req.layer, *c.Name)
		if err != nil {
			return "", err
		}
		req.inputs, req.preset = ins, *c.Name
	}
	st.mu.Lock()
	st.req = req
	st.reqSeq++
	start := !st.started
	st.started = true
	st.mu.Unlock()
	if start {
		go s.runFigure()
	}
	st.poke()
	what := fmt.Sprintf("%d inputs", len(req.inputs))
	if req.preset != "" {
		what = fmt.Sprintf("preset %q", req.preset)
	}
	return fmt.Sprintf("message figure: layer %d, %s, %d samples each", req.layer, what, req.samples), nil
}

func checkFigureLayer(op string, m *engine.Model, layer int) error {
	if layer < 0 || layer >= len(m.Layers) {
		return errorf("message figure: there is no layer %d (the model has %d layers)", layer+1, len(m.Layers))
	}
	if _, q, d := m.Layers[layer].Dims(); q != 1 || d != 1 {
		return errorf("message figure: layer %d has input dimension %d and output dimension %d; the figure needs 1 and 1", layer+1, q, d)
	}
	if m.Layers[layer].Kernel.Name() != "rbf" {
		return errorf("message figure: layer %d has a %s kernel; the figure needs rbf", layer+1, m.Layers[layer].Kernel.Name())
	}
	return nil
}

// CheckFigureInputs checks Gaussian inputs of the message figure against
// the figure's limits (count, mean range, variance): the live panel's
// commands and the downloads' URLs alike.
func CheckFigureInputs(in []montecarlo.GaussianInput) error {
	mc := make([]FigureInput, len(in))
	for i, g := range in {
		mc[i] = FigureInput{Mean: g.Mean, Var: g.Var}
	}
	_, err := checkFigureInputs(mc)
	return err
}

func checkFigureInputs(in []FigureInput) ([]montecarlo.GaussianInput, error) {
	if len(in) < 1 || len(in) > FigureMaxInputs {
		return nil, errorf("message figure: inputs has %d entries, want 1…%d", len(in), FigureMaxInputs)
	}
	out := make([]montecarlo.GaussianInput, len(in))
	for i, g := range in {
		if math.IsNaN(g.Mean) || math.Abs(g.Mean) > MaxCoordinate {
			return nil, errorf("message figure: inputs[%d].mean = %v out of range [-%d, %d]", i, g.Mean, MaxCoordinate, MaxCoordinate)
		}
		if !(g.Var > 0) || g.Var > FigureMaxVariance {
			return nil, errorf("message figure: inputs[%d].var = %v must be > 0 and ≤ %g", i, g.Var, FigureMaxVariance)
		}
		out[i] = montecarlo.GaussianInput{Mean: g.Mean, Var: g.Var}
	}
	return out, nil
}

func presetInputs(m *engine.Model, layer int, name string) ([]montecarlo.GaussianInput, error) {
	ps, err := montecarlo.Presets(m, layer)
	if err != nil {
		return nil, errorf("message figure preset: %v", err)
	}
	return slices.Clone(ps[name]), nil
}

// runFigure is the session's Monte Carlo worker.
func (s *session) runFigure() {
	defer s.recoverPanic("message_figure")
	st := s.figure
	var (
		last         time.Time
		doneM, doneR uint64
		haveDone     bool
		seq          uint64
		timer        *time.Timer
		lastErr      string // the error last reported, and for which request
		lastErrReq   uint64
		interval     = time.Second / FigureRate
	)
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-st.notify:
		}
		if wait := time.Until(last.Add(interval)); wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			select {
			case <-s.ctx.Done():
				return
			case <-timer.C:
			}
		}
		st.mu.Lock()
		req, model, d, iter, mseq, rseq := st.req, st.model, st.data, st.iter, st.modelSeq, st.reqSeq
		st.mu.Unlock()
		if req == nil || model == nil || (haveDone && mseq == doneM && rseq == doneR) {
			continue
		}
		last = time.Now()
		doneM, doneR, haveDone = mseq, rseq, true
		seq++
		b, err := figureMessage(model, d, iter, req, seq)
		// Expensive figures (100,000 samples, slow machines) are spaced
		// out so that the worker uses at most a third of the wall time.
		interval = max(time.Second/FigureRate, 3*time.Since(last))
		if err != nil {
			// Report a failure once per request, not at every model update.
			if err.Error() == lastErr && rseq == lastErrReq {
				continue
			}
			lastErr, lastErrReq = err.Error(), rseq
			b = encodeFigureError(d, iter, req, seq, err)
		} else {
			lastErr = ""
		}
		st.out.put(b)
	}
}

// figureHeader is the binary "message_figure" message (docs/protocol.md).
type figureHeader struct {
	V        int           `json:"v"`
	Type     string        `json:"type"`
	Seq      uint64        `json:"seq"`
	Applied  int64         `json:"applied"`
	DataID   int           `json:"data_id"`
	Iter     int           `json:"iter"`
	Layer    int           `json:"layer"`
	Samples  int           `json:"samples"`
	Seed     uint64        `json:"seed"`
	Preset   string        `json:"preset"`
	Error    string        `json:"error,omitempty"`
	MS       num           `json:"ms"`
	Noise    num           `json:"noise"`
	GP       *mcGP         `json:"gp,omitempty"`
	Inducing *mcInducing   `json:"inducing,omitempty"`
	Inputs   []mcInputResp `json:"inputs"`
	Sections []section     `json:"sections"`
}

func (h *figureHeader) setSections(s []section) { h.Sections = s }

type mcGP struct {
	G    int `json:"g"`
	X    Ref `json:"x"`
	Mean Ref `json:"mean"`
	SD   Ref `json:"sd"`
}

type mcInducing struct {
	M    int `json:"m"`
	Z    Ref `json:"z"`
	Mean Ref `json:"mean"`
	SD   Ref `json:"sd"`
}

type mcGauss struct {
	Mean num `json:"mean"`
	Var  num `json:"var"`
}

type mcInputResp struct {
	Mean        num     `json:"mean"`
	Var         num     `json:"var"`
	Message     mcGauss `json:"message"`
	True        mcGauss `json:"true"`
	MCMean      num     `json:"mc_mean"`
	MCVar       num     `json:"mc_var"`
	Compression num     `json:"compression"`
	Propagation num     `json:"propagation"`
	W1          num     `json:"w1"`
	W1SE        num     `json:"w1_se"`
	KL          num     `json:"kl"`
	KLSE        num     `json:"kl_se"`
	Density     mcDens  `json:"density"`
}

type mcDens struct {
	G int `json:"g"`
	X Ref `json:"x"`
	P Ref `json:"p"`
}

func (r *figureRequest) header(d *data, iter int, seq uint64) *figureHeader {
	h := &figureHeader{V: ProtocolVersion, Type: "message_figure", Seq: seq, Applied: r.applied, Iter: iter,
		Layer: r.layer, Samples: r.samples, Seed: mcSeed, Preset: r.preset, Inputs: []mcInputResp{}}
	if d != nil {
		h.DataID = d.id
	}
	return h
}

// figureMessage computes the figure for req on model and encodes it.
func figureMessage(model *engine.Model, d *data, iter int, req *figureRequest, seq uint64) ([]byte, error) {
	t0 := time.Now()
	if err := checkFigureLayer("message_figure", model, req.layer); err != nil {
		return nil, err
	}
	fd, err := montecarlo.MessageFigure(model, req.layer, req.inputs, req.samples, mcSeed)
	if err != nil {
		return nil, errorf("message figure: %v", err)
	}
	h := req.header(d, iter, seq)
	h.MS = num(float64(time.Since(t0).Microseconds()) / 1000)
	var e encoder
	encodeFigure(&e, h, fd)
	return e.finish(h)
}

// encodeFigure fills h's figure fields from fd.
func encodeFigure(e *encoder, h *figureHeader, fd *montecarlo.FigureData) {
	h.Noise = num(fd.NoiseVariance)
	h.GP = &mcGP{G: len(fd.GP.X), X: e.arr(fd.GP.X), Mean: e.arr(fd.GP.Mean), SD: e.arr(fd.GP.SD)}
	z, mean, sd := make([]float64, len(fd.Inducing)), make([]float64, len(fd.Inducing)), make([]float64, len(fd.Inducing))
	for i, b := range fd.Inducing {
		z[i], mean[i], sd[i] = b.Z, b.Mean, b.SD
	}
	h.Inducing = &mcInducing{M: len(z), Z: e.arr(z), Mean: e.arr(mean), SD: e.arr(sd)}
	for _, r := range fd.Inputs {
		h.Inputs = append(h.Inputs, mcInputResp{
			Mean: num(r.Input.Mean), Var: num(r.Input.Var),
			Message: mcGauss{num(r.Message.Mean), num(r.Message.Var)}, True: mcGauss{num(r.True.Mean), num(r.True.Var)},
			MCMean: num(r.MC.Mean), MCVar: num(r.MC.Var),
			Compression: num(r.Compression), Propagation: num(r.Propagation),
			W1: num(r.Distance.W1), W1SE: num(r.Distance.W1SE), KL: num(r.Distance.KL), KLSE: num(r.Distance.KLSE),
			Density: mcDens{G: len(r.Density.X), X: e.arr(r.Density.X), P: e.arr(r.Density.P)},
		})
	}
}

func encodeFigureError(d *data, iter int, req *figureRequest, seq uint64, err error) []byte {
	h := req.header(d, iter, seq)
	h.Error = ForPeople(err.Error()) // shown in the page
	var e encoder
	b, ferr := e.finish(h)
	if ferr != nil { // cannot happen: the header has no arrays
		return nil
	}
	return b
}

// ---- downloads ----

// FigureSession is what a download needs from a session: its latest
// published model (a private copy: safe to read while the optimizer runs),
// the data's normalisation and the figure's current layer and inputs (nil
// when the figure is off).
type FigureSession struct {
	Model          *engine.Model
	Data           *dataset.Dataset // the session's data set (shared, read-only)
	Iter           int
	Dataset        string
	NormX, NormY   dataset.Normalizer // the session's normalisation (private copies)
	Layer          int
	Inputs         []montecarlo.GaussianInput
	Samples        int
	HasFigureInput bool
}

// FigureSession returns the state of the session whose hello carried
// figure_key key; ok is false when there is none.
func (s *Server) FigureSession(key string) (fs *FigureSession, ok bool) {
	if key == "" {
		return nil, false
	}
	s.mu.Lock()
	var st *figureState
	for ss := range s.sessions {
		if ss.figure != nil && ss.figure.key == key {
			st = ss.figure
			break
		}
	}
	s.mu.Unlock()
	if st == nil {
		return nil, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.model == nil {
		return nil, false
	}
	fs = &FigureSession{Model: st.model, Iter: st.iter}
	if d := st.data; d != nil {
		fs.Dataset = d.ds.Name
		fs.Data = d.ds
		fs.NormX = dataset.Normalizer{Mean: slices.Clone(d.nx.Mean), Scale: slices.Clone(d.nx.Scale)}
		fs.NormY = dataset.Normalizer{Mean: slices.Clone(d.ny.Mean), Scale: slices.Clone(d.ny.Scale)}
	}
	if r := st.req; r != nil {
		fs.Layer, fs.Inputs, fs.Samples, fs.HasFigureInput = r.layer, slices.Clone(r.inputs), r.samples, true
	}
	return fs, true
}
