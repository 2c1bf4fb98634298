// Package view turns a live session's model into what the page draws.
//
// A view is chosen by the shape of the data and what they carry, never by
// the data set's name (For):
//
//   - regression (dgpviz/internal/view/regression): one output; the fit,
//     each layer's function and messages, the depth comparison, the
//     message figure and the fit's Monte Carlo density;
//   - latent explorer (dgpviz/internal/view/explorer): several outputs;
//     every hidden layer's messages, coloured by the input, any output or
//     any extra column, judged against ground truth and a test split when
//     the data carry them, beside the baselines;
//   - autoencoder (dgpviz/internal/view/autoencoder): outputs that are the
//     inputs; the latent map and decoded outputs (images when the data
//     have an image shape).
//
// A view owns four things: its setup section (Setup), its frame section
// (Framer: built from the optimizer's own evaluation of the model, with
// the view's further analysis at the cadence the view chooses), its
// initial model (Init: a preset's restart selection, or a plain start),
// and its extra ops (Ops). The transport (dgpviz/internal/stream) keeps
// sessions, pumps, pacing and the command table, and applies edits and
// undo; it knows views only through this package's types. What an undo
// state holds and how far back the history reaches (EditHistory), and the
// inducing-point edits' checks and moved models (CheckPoint, MovePoint),
// are this package's.
package view

import (
	"context"
	"slices"
	"sync"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/train"
	"dgpviz/internal/wire"

	"gonum.org/v1/gonum/mat"
)

// View is one way of showing a model.
type View interface {
	// Kind names the view: "regression", "explorer" or "autoencoder".
	Kind() string
	// Preset returns the view's default architecture for data d, and
	// whether it has one (the explorer's and the autoencoder's presets).
	Preset(d *Data) (Arch, bool)
	// Optimizer returns c with the optimizer settings of the view's
	// preset (natural-gradient steps for the explorer's), for the fit
	// that continues from Init's model; c as it is without a preset.
	Optimizer(c train.TrainerConfig) train.TrainerConfig
	// Init builds the first model of a session on d with architecture a:
	// the view's preset (restart selection) or a plain initialisation. It
	// returns the preset's restarts too (nil for a single start).
	Init(ctx context.Context, d *Data, a Arch, workers int) (*engine.Model, *Restarts, error)
	// Setup returns the view's section of the setup message for d, with
	// its kind; its arrays are added to e.
	Setup(e *wire.Encoder, d *Data) any
	// NewFramer returns a frame builder for one connection.
	NewFramer() Framer
	// Ops lists the view's own commands.
	Ops() []Op
	// Figures lists the figures the view's downloads draw (figure.go).
	Figures() []Figure
}

// A RowAnalyzer is a view whose frames predict every row of the data with
// the model — the regression's output message at the data, the latent
// explorer's output messages and held-out predictions (Analysis): the
// server's memory estimate of a session adds that prediction
// (engine.EstimatePredict).
type RowAnalyzer interface {
	// AnalyzedRows is how many rows the analysis predicts on ds.
	AnalyzedRows(ds *dataset.Dataset) int
}

// AnalyzedRows returns how many rows v's frames predict on ds: 0 for a
// view that is not a RowAnalyzer.
func AnalyzedRows(v View, ds *dataset.Dataset) int {
	if ra, ok := v.(RowAnalyzer); ok {
		return ra.AnalyzedRows(ds)
	}
	return 0
}

// A RowSampler is a view that shows data of many rows by a sample of
// them (the latent explorer above explorer.SampleRows rows): the setup
// carries the sampled training rows' inputs and outputs only, and says
// how many rows the data have. Its frames carry the sample's hidden
// messages as it predicts them when the snapshot has no evaluation
// (Snapshot.Eval nil and no EvalErr: a stochastic fit's first picture).
type RowSampler interface {
	// SampledRows returns the training rows shown (increasing), or nil
	// when every row is.
	SampledRows(d *Data) []int
}

// Arch is the part of a session's configuration that decides the model's
// shape and start.
type Arch struct {
	Hidden   []int  // widths of the hidden layers
	Inducing int    // inducing points per layer
	Seed     uint64 // initialisation seed
	// Restarts is how many restarts the view's Init fits and keeps
	// (Preset's answer; 0: a single start), for the server's memory
	// estimate of a build.
	Restarts int
}

// Framer builds the view-specific part of each frame. One goroutine (a
// connection's writer) uses it.
type Framer interface {
	// Frame returns the layers' sections and the view's section of a
	// frame of s, with its kind, their arrays added to e.
	Frame(e *wire.Encoder, s *Snapshot) ([]LayerFrame, any)
}

// Snapshot is the state a frame shows: a private, immutable copy of the
// model, the optimizer's evaluation of exactly that model, and where the
// optimizer is.
type Snapshot struct {
	Model *engine.Model
	// Eval is the optimizer's evaluation of Model (train.Trainer's); nil
	// when Model could not be evaluated, and EvalErr says why.
	Eval    *train.Evaluation
	EvalErr error
	Data    *Data
	Iter    int
	Applied int64 // the id of the last command applied
	Running bool
	// Version changes whenever the model may have: a new one, a step, an
	// edit. Views cache what they compute from a model by it.
	Version uint64
}

// Op is a command of a view's own. Exactly one of Apply and Answer is set.
type Op struct {
	Name string
	// Apply runs the op on the session's optimizer goroutine. It may
	// change the model (Session.Edit) or start background work
	// (Session.Go); it returns the acknowledgement's text.
	Apply func(s Session, c wire.Command) (string, error)
	// Answer answers the op from the latest published snapshot, off the
	// optimizer goroutine, with a binary message: it changes nothing, so
	// a follower of a shared session may ask it too.
	Answer func(ctx context.Context, s *Snapshot, c wire.Command) ([]byte, error)
	// Edits marks an Apply that edits the model as the transport's edits
	// do: the edit's readout (frames' "edit") shows the bound before it.
	Edits bool
}

// Session is what a view's op may use of the session it runs in. Every
// method but Go's work runs on the optimizer goroutine.
type Session interface {
	// Model is the live model (the optimizer's: read only, and only
	// during Apply).
	Model() *engine.Model
	// Data is the session's data.
	Data() *Data
	// Arch is the session's architecture and seed.
	Arch() Arch
	// Iter is the optimizer's iteration count.
	Iter() int
	// Edit makes m the live model as an undoable edit under label.
	Edit(label string, m *engine.Model) error
	// EditData makes x, y (model units; the normalisation stays the
	// session's) the working data, and fit's model of them, made from the
	// live one, the live model, as one undoable edit under label. edited
	// says whether the points differ from the data set's. The session
	// checks the row limit and its memory budgets before fit runs.
	EditData(label string, x, y *mat.Dense, edited bool, fit func(m *engine.Model, x, y *mat.Dense) (*engine.Model, error)) error
	// Go runs work in the background under the session: ctx ends with
	// the session, and send queues a binary message for the page, a newer
	// one of the same name replacing one not yet sent. It refuses, with
	// an error for people, when work of that name is still running.
	Go(name string, work func(ctx context.Context, send func([]byte))) error
	// Latest returns the latest published snapshot and a channel that
	// is closed when a newer one is published.
	Latest() (*Snapshot, <-chan struct{})
}

// OpNames lists the ops of views, in the order given.
func OpNames(views ...View) []string {
	var out []string
	for _, v := range views {
		for _, op := range v.Ops() {
			if !slices.Contains(out, op.Name) {
				out = append(out, op.Name)
			}
		}
	}
	return out
}

// FindOp returns v's op of that name.
func FindOp(v View, name string) (Op, bool) {
	for _, op := range v.Ops() {
		if op.Name == name {
			return op, true
		}
	}
	return Op{}, false
}

// Env is what the views of one server share: a context that ends with the
// server, and work that outlives a session — a baseline fitted once per
// data set — which the server waits for when it shuts down.
type Env struct {
	Ctx context.Context
	// BaselineIters is the number of L-BFGS iterations of baseline fits
	// (the explorer's one-layer GP; 0: the view's default).
	BaselineIters int

	mu   sync.Mutex
	memo map[any]*Memo
	wg   sync.WaitGroup
}

// NewEnv returns an Env whose background work ends with ctx.
func NewEnv(ctx context.Context, baselineIters int) *Env {
	return &Env{Ctx: ctx, BaselineIters: baselineIters, memo: map[any]*Memo{}}
}

// Memo is a value computed once in the background.
type Memo struct {
	done chan struct{}
	v    any
}

// Value returns the value and true once it is computed, else nil and
// false; it never waits.
func (m *Memo) Value() (any, bool) {
	select {
	case <-m.done:
		return m.v, true
	default:
		return nil, false
	}
}

// Done is closed when the value is computed.
func (m *Memo) Done() <-chan struct{} { return m.done }

// Once returns the memo of key, starting compute in the background on the
// first call; compute's ctx ends with the server.
func (e *Env) Once(key any, compute func(ctx context.Context) any) *Memo {
	e.mu.Lock()
	defer e.mu.Unlock()
	if m, ok := e.memo[key]; ok {
		return m
	}
	m := &Memo{done: make(chan struct{})}
	e.memo[key] = m
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer close(m.done)
		m.v = compute(e.Ctx)
	}()
	return m
}

// Wait waits for the background work started by Once.
func (e *Env) Wait() { e.wg.Wait() }
