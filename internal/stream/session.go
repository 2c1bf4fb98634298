package stream

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"

	"github.com/gorilla/websocket"
	"gonum.org/v1/gonum/mat"
)

// initPerturb randomises the initial model by the seed (see
// engine.InitConfig.Perturb), so that "reset with seed" shows different
// starts.
const initPerturb = 0.5

// FrameInterval is the shortest time between two frames: at most 60 per
// second.
const FrameInterval = time.Second / 60

// mailbox is a one-slot, latest-wins hand-over from the optimizer to the
// writer: put never blocks and replaces an untaken snapshot.
type mailbox struct {
	mu     sync.Mutex
	latest *snapshot
	notify chan struct{} // capacity 1
}

func newMailbox() *mailbox { return &mailbox{notify: make(chan struct{}, 1)} }

// put stores s and reports whether it replaced an untaken snapshot.
func (b *mailbox) put(s *snapshot) (dropped bool) {
	b.mu.Lock()
	dropped = b.latest != nil
	b.latest = s
	b.mu.Unlock()
	select {
	case b.notify <- struct{}{}:
	default:
	}
	return dropped
}

// applied returns the command id of the waiting snapshot (0 if none).
func (b *mailbox) applied() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.latest == nil {
		return 0
	}
	return b.latest.applied
}

func (b *mailbox) take() *snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.latest
	b.latest = nil
	return s
}

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

	cmds       chan Command // reader → optimizer
	out        chan outMsg  // → writer (replies, setups); bounded
	frames     *mailbox     // optimizer → writer, latest wins
	mc         *mcState     // message figure (mcfigure.go)
	readerDone chan struct{}
	closeMu    sync.Mutex
	closeCode  int
	closeText  string

	// owned by run
	cfg       Config
	data      *data
	tr        *engine.Trainer
	running   bool
	event     string
	converged bool
	applied   int64
	lastPub   time.Time
	lastStep  time.Time
	ipsT      time.Time
	ipsIter   int
	ips       float64

	iterations, published, dropped, written atomic.Int64
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
func (s *session) send(m outMsg) {
	select {
	case s.out <- m:
	default:
		s.fail(closePolicy, "client is not reading its messages")
	}
}

func (s *session) reply(r reply) { s.send(outMsg{data: r.bytes()}) }

func (s *session) ack(c Command, msg string) {
	cfg := s.cfg
	running := s.running
	s.reply(reply{Type: "ack", ID: c.ID, Op: c.Op, Message: msg, Config: &cfg, Running: &running})
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
	if newData || d == nil || d.ds.Name != cfg.Dataset {
		ds := s.srv.cat.Get(cfg.Dataset)
		id := 1
		if d != nil {
			id = d.id + 1
		}
		d = &data{id: id, ds: ds, nx: dataset.FitNormalizer(ds.X), ny: dataset.FitNormalizer(ds.Y)}
		d.robot = newRobotInfo(ds, d.nx, d.ny, s.srv.baselineIters)
	}
	var m *engine.Model
	var err error
	if d.robot != nil { // the robot preset's restart selection (robot.go)
		m, err = d.robot.initModel(s.ctx, d.nx.Apply(d.ds.X), d.ny.Apply(d.ds.Y), cfg, s.srv.workers)
	} else {
		m, err = engine.Initialize(d.nx.Apply(d.ds.X), d.ny.Apply(d.ds.Y), engine.InitConfig{Hidden: cfg.Hidden, Inducing: cfg.Inducing, Seed: cfg.Seed, Perturb: initPerturb})
	}
	if err != nil {
		return errorf("initialising the model: %w", err)
	}
	tr, err := engine.NewTrainer(m, s.trainerConfig(cfg))
	if err != nil {
		return errorf("starting the optimizer: %w", err)
	}
	dataChanged := s.data == nil || d.id != s.data.id
	s.cfg, s.tr, s.data = cfg, tr, d
	s.converged, s.event = false, ""
	s.ipsT, s.ipsIter, s.ips = time.Now(), 0, 0
	if dataChanged {
		b, err := d.setup(cfg)
		if err != nil {
			return err
		}
		s.send(outMsg{binary: true, data: b})
	}
	return nil
}

func (s *session) trainerConfig(cfg Config) engine.TrainerConfig {
	fr := map[engine.Group]bool{}
	for _, g := range cfg.Frozen {
		if gg, ok := engine.ParseGroup(g); ok {
			fr[gg] = true
		}
	}
	return engine.TrainerConfig{Method: cfg.Method, LearningRate: cfg.LearningRate, Frozen: fr, Seed: cfg.Seed, Workers: s.srv.workers}
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
	snap := &snapshot{
		model: s.tr.Model().Clone(), iter: it, event: s.event, converged: s.converged,
		running: s.running, ips: s.ips, method: s.cfg.Method, lr: s.cfg.LearningRate,
		frozen: slices.Clone(s.cfg.Frozen), dataID: s.data.id, applied: s.applied, robot: s.data.robot,
	}
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
	s.converged = info.Converged
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
		if s.running && s.cfg.Speed > 0 {
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
		if s.running {
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
				s.reply(reply{Type: "error", Op: "play", Error: err.Error()})
				s.publish()
				continue
			}
			if s.converged {
				s.running, s.cfg.Play = false, false
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

// handle applies one parsed command and replies.
func (s *session) handle(c Command) {
	msg, err := s.apply(c)
	if c.ID != 0 {
		s.applied = c.ID
	}
	if err != nil {
		s.log.Debug("command refused", "op", c.Op, "err", err)
		s.errorReply(c, err)
		return
	}
	s.ack(c, msg)
}

func (s *session) apply(c Command) (string, error) {
	switch c.Op {
	case "play":
		s.running, s.cfg.Play = true, true
		s.converged = false
		return "playing", nil
	case "pause":
		s.running, s.cfg.Play = false, false
		return "paused", nil
	case "speed":
		if c.Speed == nil {
			return "", errorf("speed: missing \"speed\" (iterations per second, 0: as fast as possible)")
		}
		cfg := s.cfg
		cfg.Speed = *c.Speed
		if err := cfg.Validate(s.srv.limits, s.srv.cat); err != nil {
			return "", err
		}
		s.cfg = cfg
		if cfg.Speed == 0 {
			return "speed: as fast as possible", nil
		}
		return fmt.Sprintf("speed: at most %d iterations per second", cfg.Speed), nil
	case "step":
		n := 1
		if c.N != nil {
			n = *c.N
		}
		if n < 1 || n > s.srv.limits.MaxSteps {
			return "", errorf("step: n = %d out of range 1…%d", n, s.srv.limits.MaxSteps)
		}
		s.running, s.cfg.Play = false, false
		for i := 0; i < n; i++ {
			if err := s.step(); err != nil {
				return "", err
			}
			if i+1 < n && time.Since(s.lastPub) >= FrameInterval {
				s.publish()
			}
		}
		return fmt.Sprintf("stepped %d iteration(s) to %d", n, s.tr.Iter()), nil
	case "reset":
		cfg := s.cfg
		if c.Seed != nil {
			cfg.Seed = *c.Seed
		}
		if err := s.build(cfg, false); err != nil {
			return "", err
		}
		return fmt.Sprintf("reset with seed %d", cfg.Seed), nil
	case "optimizer":
		cfg := s.cfg
		if c.Method != nil {
			cfg.Method = *c.Method
		}
		if c.LearningRate != nil {
			cfg.LearningRate = *c.LearningRate
		}
		if c.Method == nil && c.LearningRate == nil {
			return "", errorf("optimizer: give \"method\" and/or \"learning_rate\"")
		}
		if err := cfg.Validate(s.srv.limits, s.srv.cat); err != nil {
			return "", err
		}
		if err := s.tr.SetConfig(s.trainerConfig(cfg)); err != nil {
			return "", errorf("optimizer: %w", err)
		}
		s.cfg = cfg
		return fmt.Sprintf("optimizer %s, learning rate %g", cfg.Method, cfg.LearningRate), nil
	case "freeze":
		if c.Group == nil {
			return "", errorf("freeze: missing \"group\" (one of kernel, noise, inducing, q_mu, q_sqrt)")
		}
		if _, ok := engine.ParseGroup(*c.Group); !ok {
			return "", errorf("freeze: unknown group %q (one of kernel, noise, inducing, q_mu, q_sqrt)", truncate(*c.Group, 40))
		}
		frozen := c.Frozen == nil || *c.Frozen
		cfg := s.cfg
		cfg.Frozen = slices.DeleteFunc(slices.Clone(cfg.Frozen), func(g string) bool { return g == *c.Group })
		if frozen {
			cfg.Frozen = append(cfg.Frozen, *c.Group)
		}
		if err := s.tr.SetConfig(s.trainerConfig(cfg)); err != nil {
			return "", errorf("freeze: %w", err)
		}
		s.cfg = cfg
		if frozen {
			return "froze " + *c.Group, nil
		}
		return "unfroze " + *c.Group, nil
	case "move", "add", "remove":
		return s.editInducing(c)
	case "mc", "mc_preset", "mc_off":
		return s.mcCommand(c)
	case "architecture":
		cfg := s.cfg
		if c.Hidden == nil && c.Inducing == nil {
			return "", errorf("architecture: give \"hidden\" and/or \"inducing\"")
		}
		if c.Hidden != nil {
			cfg.Hidden = slices.Clone(c.Hidden)
		}
		if c.Inducing != nil {
			cfg.Inducing = *c.Inducing
		}
		if err := s.build(cfg, false); err != nil {
			return "", err
		}
		return fmt.Sprintf("architecture: hidden %v, %d inducing points per layer", cfg.Hidden, cfg.Inducing), nil
	case "dataset":
		if c.Dataset == nil {
			return "", errorf("dataset: missing \"dataset\" (one of %v)", s.srv.cat.Names())
		}
		cfg := s.cfg
		cfg.Dataset = *c.Dataset
		if IsRobot(s.srv.cat.Get(cfg.Dataset)) && (s.data == nil || !IsRobot(s.data.ds)) {
			cfg = RobotConfig(cfg, s.srv.limits) // switching to robot data: the paper's preset
		}
		if err := s.build(cfg, false); err != nil {
			return "", err
		}
		return "data set " + cfg.Dataset, nil
	}
	return "", errorf("unknown op %q", c.Op)
}

// editInducing moves, adds or removes one inducing point of one layer.
func (s *session) editInducing(c Command) (string, error) {
	m := s.tr.Model()
	if c.Layer == nil {
		return "", errorf("%s: missing \"layer\"", c.Op)
	}
	li := *c.Layer
	if li < 0 || li >= len(m.Layers) {
		return "", errorf("%s: layer %d out of range 0…%d", c.Op, li, len(m.Layers)-1)
	}
	mz, q, d := m.Layers[li].Dims()
	if c.Z != nil && len(c.Z) != q {
		return "", errorf("%s: z has %d values, layer %d has input dimension %d", c.Op, len(c.Z), li, q)
	}
	if c.Mu != nil && len(c.Mu) != d {
		return "", errorf("%s: mu has %d values, layer %d has output dimension %d", c.Op, len(c.Mu), li, d)
	}
	idx := -1
	if c.Op != "add" {
		if c.Index == nil {
			return "", errorf("%s: missing \"index\"", c.Op)
		}
		idx = *c.Index
		if idx < 0 || idx >= mz {
			return "", errorf("%s: index %d out of range 0…%d for layer %d", c.Op, idx, mz-1, li)
		}
	}
	nm := m.Clone()
	l := nm.Layers[li]
	var msg string
	switch c.Op {
	case "move":
		if c.Z == nil && c.Mu == nil {
			return "", errorf("move: give \"z\" and/or \"mu\"")
		}
		if c.Z != nil {
			l.InducingInputs.SetRow(idx, c.Z)
		}
		if c.Mu != nil {
			l.QMu.SetRow(idx, c.Mu)
		}
		msg = fmt.Sprintf("moved inducing point %d of layer %d", idx, li)
	case "add":
		if c.Z == nil {
			return "", errorf("add: missing \"z\"")
		}
		if mz+1 > s.srv.limits.MaxInducing {
			return "", errorf("add: layer %d already has %d inducing points, the limit", li, mz)
		}
		if err := addInducing(l, nm.Jitter, c.Z, c.Mu); err != nil {
			return "", err
		}
		msg = fmt.Sprintf("added inducing point %d to layer %d", mz, li)
	case "remove":
		if mz == 1 {
			return "", errorf("remove: layer %d has only one inducing point", li)
		}
		removeInducing(l, idx)
		msg = fmt.Sprintf("removed inducing point %d of layer %d", idx, li)
	}
	if err := s.tr.SetModel(nm); err != nil {
		return "", errorf("%s: %w", c.Op, err)
	}
	s.converged = false
	return msg, nil
}

// addInducing appends an inducing point at z whose q(u) marginal is the
// layer's current posterior there (mean mu if given).
func addInducing(l *engine.Layer, jitter float64, z, mu []float64) error {
	mz, q, d := l.Dims()
	p, err := engine.NewLayerPosterior(l, jitter)
	mean := make([]float64, d)
	varU := make([]float64, d)
	varCond := 1.0
	if err == nil {
		varCond = p.FunctionAt(z, nil, mean, varU)
	}
	if mu != nil {
		copy(mean, mu)
	}
	zz := mat.NewDense(mz+1, q, nil)
	zz.Slice(0, mz, 0, q).(*mat.Dense).Copy(l.InducingInputs)
	zz.SetRow(mz, z)
	mm := mat.NewDense(mz+1, d, nil)
	mm.Slice(0, mz, 0, d).(*mat.Dense).Copy(l.QMu)
	mm.SetRow(mz, mean)
	for k, s := range l.QSqrt {
		ns := mat.NewDense(mz+1, mz+1, nil)
		ns.Slice(0, mz, 0, mz).(*mat.Dense).Copy(s)
		ns.Set(mz, mz, math.Sqrt(math.Max(varU[k]+math.Max(varCond, 0), 1e-4)))
		l.QSqrt[k] = ns
	}
	l.InducingInputs, l.QMu = zz, mm
	return nil
}

// removeInducing deletes inducing point i (its row of Z and q_mu, its row
// and column of each q_sqrt factor, which stays lower triangular).
func removeInducing(l *engine.Layer, i int) {
	mz, q, d := l.Dims()
	keep := make([]int, 0, mz-1)
	for r := 0; r < mz; r++ {
		if r != i {
			keep = append(keep, r)
		}
	}
	zz := mat.NewDense(mz-1, q, nil)
	mm := mat.NewDense(mz-1, d, nil)
	for a, r := range keep {
		zz.SetRow(a, l.InducingInputs.RawRowView(r)[:q])
		mm.SetRow(a, l.QMu.RawRowView(r)[:d])
	}
	for k, s := range l.QSqrt {
		ns := mat.NewDense(mz-1, mz-1, nil)
		for a, r := range keep {
			for b, cc := range keep {
				ns.Set(a, b, s.At(r, cc))
			}
		}
		l.QSqrt[k] = ns
	}
	l.InducingInputs, l.QMu = zz, mm
}
