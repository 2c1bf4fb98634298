package stream

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/train"

	"github.com/gorilla/websocket"
)

// initPerturb randomises the initial model by the seed (see
// train.InitConfig.Perturb), so that "reset with seed" shows different
// starts.
const initPerturb = 0.5

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
// the only goroutine that touches the trainer.
type session struct {
	id     uint64
	srv    *Server
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelCauseFunc

	cmds       chan Command        // reader → optimizer
	decodes    chan Command        // reader → decode goroutine (decode.go)
	out        chan outMsg         // → writer (replies, setups); bounded
	frames     *mailbox[*snapshot] // optimizer → writer, latest wins (mailbox.go)
	figure     *figureState        // message figure (messagefigure.go)
	density    *densityState       // the fit panel's Monte Carlo density (density.go)
	hub        *Hub                // read-only followers (follow.go)
	gate       *drawGate           // frames paced by the page's drawing (drawgate.go)
	compare    *compareState       // the depth comparison (compare.go)
	readerDone chan struct{}
	closeMu    sync.Mutex
	closeCode  int
	closeText  string

	// owned by run
	cfg      Config
	data     *data
	tr       *train.Trainer
	running  bool
	event    string
	status   train.Status // the last step's: why stepping again cannot help, if it cannot
	applied  int64
	lastPub  time.Time
	lastStep time.Time
	dataSeq  int         // the last data version's id (nextDataID)
	restarts *restartSet // the robot preset's restarts (robot_restarts.go), else nil
	restart  int         // the restart the model started from (-1: none)
	undo     []editState // edits.go
	redo     []editState
	drag     *dragBase
	steps    int   // iterations a "step" command still has to run
	stepID   int64 // that command's id
	// the last published model and its version (publish)
	modelEdits int64
	pubModel   *engine.Model
	pubVersion modelVersion
	ipsT       time.Time
	ipsIter    int
	ips        float64

	resumeToken string // hello's token for resuming this session (resume.go)
	private     string // the private data set of a loaded model it owns (upload.go)

	iterations, published, dropped, written atomic.Int64
	playing                                 atomic.Bool  // running, for the load watch (load.go)
	cmdWait                                 atomic.Int64 // the longest a command waited since the load watch looked (ns)
}

func (s *session) stats() Stats {
	return Stats{s.iterations.Load(), s.published.Load(), s.dropped.Load(), s.written.Load()}
}

// recoverPanic turns a panic in one of the session's goroutines into the
// end of that session (close 1011), so that no client input can bring the
// server down. Nothing is known to panic; this is insurance.
func (s *session) recoverPanic(where string) {
	if r := recover(); r != nil {
		s.log.Error("stream: panic in session", "goroutine", where, "panic", r, "stack", string(debug.Stack()))
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
	s.cancel(fmt.Errorf("stream: %s", text))
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
	running := s.running
	r := reply{Type: "ack", ID: c.ID, Op: c.Op, Message: msg, Config: &cfg, Running: &running}
	nu, nr := len(s.undo), len(s.redo)
	r.Undo, r.Redo = &nu, &nr
	if nu > 0 {
		r.UndoLabel = s.undo[nu-1].label
	}
	if nr > 0 {
		r.RedoLabel = s.redo[nr-1].label
	}
	s.reply(r)
}

func (s *session) errorReply(c Command, err error) {
	s.reply(reply{Type: "error", ID: c.ID, Op: c.Op, Error: err.Error()})
}

// build makes a fresh model and trainer for cfg.
func (s *session) build(cfg Config, newData bool) error {
	if err := cfg.Validate(s.srv.limits, s.srv.cat); err != nil {
		return err
	}
	d := s.data
	fresh := newData || d == nil || d.ds.Name != cfg.Dataset
	x, y := s.srv.cat.Get(cfg.Dataset).X, s.srv.cat.Get(cfg.Dataset).Y
	if !fresh {
		x, y = d.x, d.y // a reset or a new architecture keeps edited data points
	}
	n, q := x.Dims()
	_, dy := y.Dims()
	if err := s.srv.reserve(s, EstimateConfig(cfg, n, q, dy).Bytes); err != nil {
		return err
	}
	if fresh {
		ds := s.srv.cat.Get(cfg.Dataset)
		d = &data{id: s.nextDataID(), ds: ds, nx: dataset.FitNormalizer(ds.X), ny: dataset.FitNormalizer(ds.Y)}
		d.x, d.y = d.nx.Apply(ds.X), d.ny.Apply(ds.Y)
		d.robot = newRobotInfo(ds, d.nx, d.ny, s.srv.baselines)
		d.frey = newFreyInfo(ds)
	}
	var m *engine.Model
	var rs *restartSet
	var err error
	if d.robot != nil { // the robot preset's restart selection (robot.go)
		m, rs, err = d.robot.initModel(s.ctx, d.x, d.y, cfg, s.srv.workers)
	} else if d.frey != nil { // the Frey preset's restart selection (frey.go)
		m, err = d.frey.initModel(s.ctx, d.x, d.y, cfg, s.srv.workers)
	} else {
		// A reset or a new architecture keeps edited data points.
		m, err = train.Initialize(d.x, d.y, train.InitConfig{Hidden: cfg.Hidden, Inducing: cfg.Inducing, Seed: cfg.Seed, Perturb: initPerturb})
	}
	if err != nil {
		return errorf("initialising the model: %w", err)
	}
	tr, err := train.NewTrainer(m, s.trainerConfig(cfg))
	if err != nil {
		return errorf("starting the optimizer: %w", err)
	}
	dataChanged := s.data == nil || d.id != s.data.id
	s.cfg, s.tr, s.data = cfg, tr, d
	s.restarts, s.restart = rs, -1
	if rs != nil {
		s.restart = rs.chosen
	}
	s.status, s.event = train.NotTerminated, ""
	s.clearHistory()
	s.ipsT, s.ipsIter, s.ips = time.Now(), 0, 0
	if dataChanged {
		return s.sendSetup()
	}
	return nil
}

func (s *session) trainerConfig(cfg Config) train.TrainerConfig {
	fr := map[engine.Group]bool{}
	for _, g := range cfg.Frozen {
		if gg, ok := engine.ParseGroup(g); ok {
			fr[gg] = true
		}
	}
	return train.TrainerConfig{Method: cfg.Method, LearningRate: cfg.LearningRate, Frozen: fr, Seed: cfg.Seed, Workers: s.srv.workers}
}

// modelVersion identifies the trainer's model as it stands: a new trainer,
// every optimizer step (which may change it even without an accepted
// iteration, e.g. raising the jitter) and every edit make a new version.
type modelVersion struct {
	tr           *train.Trainer
	steps, edits int64
}

// publish hands a snapshot of the model to the writer.
func (s *session) publish() {
	now := time.Now()
	s.lastPub = now
	it := s.tr.Iter()
	if dt := now.Sub(s.ipsT); dt >= 250*time.Millisecond || !s.running {
		if s.running && dt > 0 {
			s.ips = float64(it-s.ipsIter) / dt.Seconds()
		} else if !s.running {
			s.ips = 0
		}
		s.ipsT, s.ipsIter = now, it
	}
	// The published model is cloned only when it may have changed (a step,
	// an edit, a new model): a republication of the same model (an ack, the
	// frame-rate floor while paused) shares the last clone, so that figure
	// downloads keyed by it stay cached and a paused session allocates
	// nothing per frame.
	ver := modelVersion{tr: s.tr, steps: s.iterations.Load(), edits: s.modelEdits}
	if s.pubModel == nil || ver != s.pubVersion {
		// CloneParams shares the data, which nothing writes into: the Frey
		// faces' 2 × 8.8 MB are not copied for every frame.
		s.pubModel, s.pubVersion = s.tr.Model().CloneParams(), ver
	}
	snap := &snapshot{
		model: s.pubModel, iter: it, event: s.event, status: s.status,
		running: s.running, ips: s.ips, method: s.cfg.Method.String(), lr: s.cfg.LearningRate,
		frozen: slices.Clone(s.cfg.Frozen), dataID: s.data.id, applied: s.applied, robot: s.data.robot, frey: s.data.frey,
		restarts: s.restarts, restart: s.restart, followers: s.hub.count(),
	}
	if s.data.frey != nil { // the Frey view shows the optimizer's own evaluation (frey_frame.go)
		snap.eval, _ = s.tr.LastEvaluation()
	}
	s.hub.publishState(&forkState{cfg: s.cfg, data: s.data, model: s.pubModel, iter: it})
	s.playing.Store(s.running)
	s.published.Add(1)
	if s.frames.put(snap) {
		s.dropped.Add(1)
	}
	s.mcPublished(snap)
}

// step runs one optimizer iteration.
func (s *session) step() error {
	s.lastStep = time.Now()
	info, err := s.tr.Step()
	s.iterations.Add(1)
	if info.Event != "" {
		s.event = info.Event
	}
	s.status = info.Status
	if err != nil {
		return errorf("optimizer: %w", err)
	}
	return nil
}

// run is the optimizer goroutine: it steps while playing, applies commands
// between steps and publishes snapshots at most every FrameInterval while
// running, and after every command.
func (s *session) run() {
	defer s.recoverPanic("optimizer")
	var pace *time.Timer
	for {
		if s.running && s.steps == 0 && s.cfg.Speed > 0 {
			if wait := time.Until(s.lastStep.Add(time.Second / time.Duration(s.cfg.Speed))); wait > 0 {
				if pace == nil {
					pace = time.NewTimer(wait)
				} else {
					pace.Reset(wait)
				}
				select {
				case <-s.ctx.Done():
					return
				case c := <-s.cmds:
					s.handle(c)
					s.publish()
					continue
				case <-pace.C:
				}
			}
		}
		if s.running || s.steps > 0 {
			// Commands are served between iterations, and the session's
			// end stops the work: a long "step" holds neither.
			select {
			case <-s.ctx.Done():
				return
			case c := <-s.cmds:
				s.handle(c)
				s.publish()
				continue
			default:
			}
			if err := s.step(); err != nil {
				s.running, s.cfg.Play = false, false
				s.finishSteps()
				s.reply(reply{Type: "error", Op: "play", Error: err.Error()})
				s.publish()
				continue
			}
			if s.steps > 0 {
				if s.steps--; s.steps == 0 {
					s.finishSteps()
					s.publish()
					continue
				}
			}
			if s.status.Terminated() {
				s.running, s.cfg.Play = false, false
				s.finishSteps()
				s.publish()
				continue
			}
			if time.Since(s.lastPub) >= FrameInterval {
				s.publish()
			}
			continue
		}
		select {
		case <-s.ctx.Done():
			return
		case c := <-s.cmds:
			s.handle(c)
			s.publish()
		}
	}
}

// finishSteps ends a "step" command's iterations: frames from now on say
// it has been applied.
func (s *session) finishSteps() {
	s.steps = 0
	if s.stepID > s.applied {
		s.applied = s.stepID
	}
	s.stepID = 0
}

// handle applies one parsed command and replies.
func (s *session) handle(c Command) {
	if !c.received.IsZero() { // the longest wait since the load watch last looked
		if w := int64(time.Since(c.received)); w > s.cmdWait.Load() {
			s.cmdWait.Store(w)
		}
	}
	if c.Op != "move" {
		s.drag = nil // any other command ends a drag
	}
	switch c.Op {
	case "play", "pause", "reset", "architecture", "dataset":
		s.finishSteps() // these end a step command's run; others interleave with it
	}
	msg, err := s.apply(c)
	if c.ID != 0 && !(c.Op == "step" && err == nil) {
		s.applied = c.ID // a step's id is applied when its iterations are done
	}
	if err != nil {
		s.log.Debug("command refused", "op", c.Op, "err", err)
		s.errorReply(c, err)
		return
	}
	s.ack(c, msg)
}
