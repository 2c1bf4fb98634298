package stream

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/allviews"
	"dgpviz/internal/share"
	"dgpviz/internal/train"
	"dgpviz/internal/view"

	"github.com/gorilla/websocket"
)

// FrameInterval is the shortest time between two frames: at most 60 per
// second.
const FrameInterval = time.Second / 60

// outMsg is a queued message for the writer.
type outMsg struct {
	binary bool
	data   []byte
}

// Stats counts a session's work, for tests and logs.
type Stats struct {
	Iterations int64 // optimizer iterations
	Published  int64 // snapshots handed to the writer
	Dropped    int64 // snapshots replaced before the writer took them
	Frames     int64 // frames written
}

// session is one websocket client's model and optimizer. Its run method is
// the only goroutine that touches the trainer and the fields under "owned
// by run".
type session struct {
	id     uint64
	srv    *Server
	client string // who it is for per-client limits (admit.ClientOf)
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelCauseFunc

	cmds       chan Command                 // reader → optimizer
	answers    chan Command                 // reader → the answering goroutine (a view's Answer ops)
	out        chan outMsg                  // → writer (replies, setups); bounded
	frames     *share.Mailbox[*publication] // optimizer → writer, latest wins (share.Mailbox)
	viewOut    *share.Outbox                // the view's background work → writer, latest wins per name
	hub        *share.Hub                   // read-only followers (follow.go)
	gate       *share.DrawGate              // frames paced by the page's drawing (share.DrawGate)
	latest     atomic.Pointer[publication]
	changedMu  sync.Mutex
	changed    chan struct{} // closed when a newer publication replaces latest
	work       workSet       // the view's background work (work.go)
	readerDone chan struct{}
	closeMu    sync.Mutex
	closeCode  int
	closeText  string
	// downloadKey names the session in figure downloads (hello's
	// "figure_key"; published.go).
	downloadKey string

	// owned by run
	cfg      admit.Config
	data     *view.Data
	view     view.View
	tr       *train.Trainer
	opt      optimizerState
	restarts *view.Restarts   // the preset's restarts, or nil
	restart  int              // the restart the model started from (-1: none)
	hist     view.EditHistory // undo, redo and the drag in progress (edits.go)
	dataSeq  int              // the last data version's id (nextDataID)
	pub      publisher        // the last published model and its evaluation
	lastEdit *editDelta       // the last edit's change of the bound (edits.go), nil after a new model
	editSeq  int              // edits so far (editDelta.Seq)

	resumeToken string      // hello's token for resuming this session (resume.go)
	pageLeft    atomic.Bool // the page closed the socket itself (1000, 1001): its share ends at once
	private     string      // the private data set of a loaded model it owns (upload.go)

	iterations, published, dropped, written atomic.Int64
	playing                                 atomic.Bool  // running, for the load watch (load.go)
	cmdWait                                 atomic.Int64 // the longest a command waited since the load watch looked (ns)
}

// optimizerState is what the optimizer goroutine knows of its own run.
type optimizerState struct {
	// running: the optimizer steps (at the pace below). A person's pause
	// is cfg.Play false; running false with cfg.Play true means it
	// stopped by itself (converged, failed).
	running bool
	// held: a drag in the page holds the optimizer (hold, release): it
	// does not step, so that the drag's moves are one edit, and goes on
	// as running says when released.
	held   bool
	settle train.Settler // fast until the bound settles
	// paced: the repair of an edit runs at cfg.Speed from its first
	// iteration (cfg.WatchRepair), so that a class sees it.
	paced    bool
	event    string
	status   train.Status // the last step's: why stepping again cannot help, if it cannot
	applied  int64        // the id of the last command applied
	steps    int          // iterations a "step" command still has to run
	stepID   int64        // that command's id
	lastPub  time.Time
	lastStep time.Time
	ipsT     time.Time // iterations per second, measured over ≥ 250 ms
	ipsIter  int
	ips      float64
	// estimate: the last step's bound when it was a minibatch estimate
	// (NaN when it was on every row); epochs: the passes over the data
	// a stochastic fit's minibatches made (train.StepInfo).
	estimate float64
	epochs   float64
}

func (s *session) stats() Stats {
	return Stats{s.iterations.Load(), s.published.Load(), s.dropped.Load(), s.written.Load()}
}

// recoverPanic turns a panic in one of the session's goroutines into the
// end of that session (close 1011), so that no client input can bring the
// server down. Nothing is known to panic; this is insurance.
func (s *session) recoverPanic(where string) {
	if r := recover(); r != nil {
		s.log.Error("panic in session", "goroutine", where, "panic", r, "stack", string(debug.Stack()))
		s.fail(websocket.CloseInternalServerErr, "internal error")
	}
}

// fail ends the session with a websocket close status and reason.
func (s *session) fail(code int, text string) {
	s.closeMu.Lock()
	if s.closeCode == 0 {
		s.closeCode, s.closeText = code, text
	}
	s.closeMu.Unlock()
	s.cancel(fmt.Errorf("%s", text))
}

// send queues a message for the writer. A full queue means the client does
// not read: the session is closed rather than buffering without bound.
//
// A client that reads but sends commands faster than replies are written
// (a hundred back to back) gets a moment to catch up: the queue must stay
// full for replyWait before the session is closed.
func (s *session) send(m outMsg) {
	select {
	case s.out <- m:
		return
	default:
	}
	t := time.NewTimer(replyWait)
	defer t.Stop()
	select {
	case s.out <- m:
	case <-s.ctx.Done():
	case <-t.C:
		s.fail(closePolicy, "client is not reading its messages")
	}
}

func (s *session) reply(r reply) { s.send(outMsg{data: r.bytes()}) }

func (s *session) ack(c Command, msg string) {
	cfg := s.cfg
	running := s.opt.running
	r := reply{Type: "ack", ID: c.ID, Op: c.Op, Message: msg, Config: &cfg, Running: &running}
	nu, nr := len(s.hist.Undo), len(s.hist.Redo)
	r.Undo, r.Redo = &nu, &nr
	if nu > 0 {
		r.UndoLabel = s.hist.Undo[nu-1].Label
	}
	if nr > 0 {
		r.RedoLabel = s.hist.Redo[nr-1].Label
	}
	s.reply(r)
}

func (s *session) errorReply(c Command, err error) {
	s.reply(reply{Type: "error", ID: c.ID, Op: c.Op, Error: err.Error()})
}

// build makes a fresh model and trainer for cfg: on the data set's original
// data when newData, else on the session's working data (a reset or a new
// architecture keeps edited data points).
func (s *session) build(cfg admit.Config, newData bool) error {
	if err := cfg.Validate(s.srv.limits, s.srv.cat); err != nil {
		return err
	}
	ds := s.srv.cat.Get(cfg.Dataset)
	fresh := newData || s.data == nil || s.data.Set != ds
	d, v := s.data, s.view
	if fresh {
		d, v = view.NewData(s.nextDataID(), ds), allviews.For(ds, s.srv.env)
	}
	// The budget first (budget.go): the new model is built beside the old
	// one, and a preset's restarts run side by side.
	n, q, dy := d.Dims()
	est := admit.EstimateSession(cfg, d.Set, n, q, dy)
	if err := admit.CheckBudget(est, s.srv.limits); err != nil {
		return err
	}
	settle, err := s.srv.lot.ReserveBuild(s, s.client, est)
	if err != nil {
		return err
	}
	// The build is a job of the client's in the server's pool (admit.Pool).
	j, err := s.srv.pool.Admit(s.client)
	if err != nil {
		settle(false)
		return err
	}
	m, rs, err := v.Init(j.Context(s.ctx), d, cfg.Arch(), s.srv.workers)
	j.End()
	if err != nil {
		settle(false)
		return fmt.Errorf("initialising the model: %w", err)
	}
	tr, err := train.NewTrainer(m, s.srv.onShards(v.Optimizer(cfg.Trainer(s.srv.workers, n)), d))
	if err != nil {
		settle(false)
		return fmt.Errorf("starting the optimizer: %w", err)
	}
	settle(true)
	dataChanged := s.data == nil || d.ID != s.data.ID
	if v != s.view {
		s.work.stop() // the old view's figures are of no use to the new one
	}
	s.cfg, s.tr, s.data, s.view = cfg, tr, d, v
	s.restarts, s.restart = rs, -1
	if rs != nil {
		s.restart = rs.Chosen
	}
	s.opt.event = ""
	s.opt.estimate, s.opt.epochs = math.NaN(), 0
	s.hist.Clear()
	s.lastEdit = nil // a new model is not an edit of the old one
	s.carryOn()
	s.opt.ipsT, s.opt.ipsIter, s.opt.ips = time.Now(), 0, 0
	if dataChanged {
		return s.sendSetup()
	}
	return nil
}

// trainerConfig is the optimizer's configuration for cfg, with the
// session's view's preset settings (view.View.Optimizer).
func (s *session) trainerConfig(cfg admit.Config) train.TrainerConfig {
	n, _, _ := s.data.Dims()
	return s.srv.onShards(s.view.Optimizer(cfg.Trainer(s.srv.workers, n)), s.data)
}

// onShards returns tc with the evaluator of a fit of d on worker
// processes, if the server has them (Options.Shards).
func (srv *Server) onShards(tc train.TrainerConfig, d *view.Data) train.TrainerConfig {
	if srv.shards != nil {
		tc.Evaluator = srv.shards(d)
	}
	return tc
}

// fastUntilSettled switches the fast phase on (train.Settler: flat out
// until the bound settles, then at the session's speed); the pace
// measurement (TestMeasurePace) turns it off to time the pace before it.
var fastUntilSettled = true

// carryOn lets the optimizer go on from a new or edited model, or a new
// configuration: it runs again unless a person paused it, and runs fast
// until the bound settles again. An edit after convergence is repaired
// without anyone pressing Play.
func (s *session) carryOn() {
	s.opt.status = train.NotTerminated
	s.opt.running = s.cfg.Play
	s.opt.settle.Reset()
	s.opt.paced = false
}

// step runs one optimizer iteration.
func (s *session) step() error {
	s.opt.lastStep = time.Now()
	info, err := s.tr.Step()
	s.iterations.Add(1)
	if info.Event != "" {
		s.opt.event = info.Event
	}
	if err == nil && !info.Estimate {
		s.opt.settle.Add(info.Bound)
	}
	s.opt.estimate, s.opt.epochs = math.NaN(), info.Epochs
	if info.Estimate {
		s.opt.estimate = info.Bound
	}
	s.opt.status = info.Status
	if err != nil {
		return fmt.Errorf("optimizer: %w", err)
	}
	return nil
}

// run is the optimizer goroutine: it steps while playing and not held
// (or while a "step" command has iterations left) — as fast as it can
// until the bound settles, then at most cfg.Speed iterations a second —,
// applies commands between iterations, and publishes the model at most
// every FrameInterval while running and after every command.
func (s *session) run() {
	defer s.recoverPanic("optimizer")
	pace := time.NewTimer(time.Hour)
	pace.Stop()
	for {
		stepping := (s.opt.running && !s.opt.held) || s.opt.steps > 0
		var due <-chan time.Time // the speed limit's next iteration
		if stepping && s.opt.steps == 0 && s.cfg.Speed > 0 && (s.opt.settle.Settled() || !fastUntilSettled || s.opt.paced) {
			if wait := time.Until(s.opt.lastStep.Add(time.Second / time.Duration(s.cfg.Speed))); wait > 0 {
				pace.Reset(wait)
				due, stepping = pace.C, false
			}
		}
		if !stepping {
			// Wait for a command, or for the speed limit's next iteration.
			select {
			case <-s.ctx.Done():
				return
			case c := <-s.cmds:
				pace.Stop()
				s.handle(c)
				s.publish()
			case <-s.hub.Recount(): // followers came or went: say so now
				pace.Stop()
				s.publish()
			case <-due:
			}
			continue
		}
		// Commands are served between iterations, and the session's end
		// stops the work: a long "step" holds neither.
		select {
		case <-s.ctx.Done():
			return
		case c := <-s.cmds:
			s.handle(c)
			s.publish()
			continue
		default:
		}
		s.iterate()
		// Flat out (until the bound settles, speed 0, a step command) the
		// optimizer would hold its core for the scheduler's whole time
		// slice, and other sessions' writers and paced iterations would
		// wait behind it (docs/measurements.md, "Hardening": reset spam).
		// Yield after each iteration instead.
		runtime.Gosched()
	}
}

// iterate runs one iteration and publishes what it changed. An optimizer
// that stops by itself (converged, failed) stops running but is not
// paused: the next edit sets it going again (carryOn).
func (s *session) iterate() {
	if err := s.step(); err != nil {
		s.opt.running = false
		s.finishSteps()
		s.reply(reply{Type: "error", Op: "play", Error: err.Error()})
		s.publish()
		return
	}
	if s.opt.steps > 0 {
		if s.opt.steps--; s.opt.steps == 0 {
			s.finishSteps()
			s.publish()
			return
		}
	}
	if s.opt.status.Terminated() {
		s.opt.running = false
		s.finishSteps()
		s.publish()
		return
	}
	if time.Since(s.opt.lastPub) >= FrameInterval {
		s.publish()
	}
}

// finishSteps ends a "step" command's iterations: frames from now on say
// it has been applied.
func (s *session) finishSteps() {
	s.opt.steps = 0
	if s.opt.stepID > s.opt.applied {
		s.opt.applied = s.opt.stepID
	}
	s.opt.stepID = 0
}

// handle applies one parsed command and replies.
func (s *session) handle(c Command) {
	if !c.Received.IsZero() { // the longest wait since the load watch last looked
		if w := int64(time.Since(c.Received)); w > s.cmdWait.Load() {
			s.cmdWait.Store(w)
		}
	}
	if c.Op != "move" {
		s.hist.Drag = nil // any other command ends a drag
	}
	switch c.Op {
	case "play", "pause", "step", "reset", "architecture", "dataset":
		s.opt.held = false // a person's own command ends a hold a lost release left behind
	}
	switch c.Op {
	case "play", "pause", "reset", "architecture", "dataset":
		s.finishSteps() // these end a step command's run; others interleave with it
	}
	var before *view.BoundTerms // the bound's terms before an edit (edits.go)
	if op, ok := view.FindOp(s.view, c.Op); editOps[c.Op] || ok && op.Edits {
		before = s.currentTerms()
	}
	edits := s.pub.edits
	msg, err := s.apply(c)
	if c.ID != 0 && !(c.Op == "step" && err == nil) {
		s.opt.applied = c.ID // a step's id is applied when its iterations are done
	}
	if err != nil {
		s.log.Debug("command refused", "op", c.Op, "err", err)
		s.errorReply(c, err)
		return
	}
	if s.pub.edits != edits { // the command changed the model: an edit
		s.recordEdit(c, before)
	}
	s.ack(c, msg)
}

// nextDataID numbers the session's data versions; frames carry the id of
// the data their model was fitted to.
func (s *session) nextDataID() int {
	s.dataSeq++
	return s.dataSeq
}

// sendSetup sends the current data's setup message, to the page and to
// the followers.
func (s *session) sendSetup() error {
	b, err := setupMessage(s.data, s.view, s.cfg)
	if err != nil {
		return err
	}
	s.send(outMsg{binary: true, data: b})
	s.hub.Setup(b)
	return nil
}
