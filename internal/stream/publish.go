package stream

import (
	"slices"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
)

// publication is what the optimizer goroutine hands to the writer and to
// the view's background work: a snapshot of the model with the
// optimizer's evaluation of it, and the optimizer's state for the frame's
// header. It is never changed once made.
type publication struct {
	snap     *view.Snapshot
	view     view.View
	event    string
	status   train.Status
	paused   bool // a person paused the optimizer (cfg.Play false)
	held     bool // a drag holds it
	fast     bool // running fast until the bound settles (train.Settler)
	edit     *editDelta
	collapse *view.Collapse
	ips      float64
	method   string // the trainer's (admit.Config.Trainer): svi where cfg asks for lbfgs on large data
	lr       float64
	// Stochastic fits (docs/protocol.md, "Stochastic fits"): the model
	// shown is the last full-data check's, of iteration modelIter; estimate
	// is the last step's minibatch estimate of the bound (NaN after a step
	// on every row), epochs the passes over the data so far.
	stochastic bool
	modelIter  int
	estimate   float64
	epochs     float64
	workers    int // worker processes that made the last evaluation (0: this one)
	frozen     []string
	restarts   *view.Restarts
	restart    int // the restart the model started from (-1: none)
	followers  int
}

// publisher keeps the last published model, so that a republication of
// the same model (an ack, a paused session's command) shares its copy and
// its evaluation: figure downloads keyed by the copy stay cached, and a
// paused session evaluates nothing per frame.
type publisher struct {
	key      modelVersion
	version  uint64 // the snapshots' Version: one per published model
	edits    int64  // edits of the trainer's model so far
	model    *engine.Model
	eval     *train.Evaluation
	evalErr  error
	collapse *view.Collapse // view.Diagnose of model
	// checked is the trainer's checked model (train.Trainer.Checked) that
	// model copies, nil when model is the trainer's current one; iter is
	// the iteration model is of.
	checked *engine.Model
	iter    int
}

// modelVersion identifies the trainer's model as it stands: a new trainer,
// every optimizer step (which may change it even without an accepted
// iteration, e.g. raising the jitter) and every edit make a new version.
type modelVersion struct {
	tr           *train.Trainer
	steps, edits int64
}

// publish hands a snapshot of the model to the writer, the view's work
// and the followers' hub.
func (s *session) publish() {
	now := time.Now()
	s.opt.lastPub = now
	it := s.tr.Iter()
	if dt := now.Sub(s.opt.ipsT); dt >= 250*time.Millisecond || !s.opt.running {
		if s.opt.running && dt > 0 {
			s.opt.ips = float64(it-s.opt.ipsIter) / dt.Seconds()
		} else if !s.opt.running {
			s.opt.ips = 0
		}
		s.opt.ipsT, s.opt.ipsIter = now, it
	}
	pb := s.refresh()
	tc := s.tr.Config()
	p := &publication{
		snap: &view.Snapshot{Model: pb.model, Eval: pb.eval, EvalErr: pb.evalErr, Data: s.data, Iter: it,
			Applied: s.opt.applied, Running: s.opt.running, Version: pb.version},
		view: s.view, event: s.opt.event, status: s.opt.status, ips: s.opt.ips,
		paused: !s.cfg.Play, held: s.opt.held, fast: s.opt.running && !s.opt.held && (s.cfg.Speed == 0 || !s.opt.settle.Settled() && fastUntilSettled && !s.opt.paced),
		edit: s.lastEdit, collapse: pb.collapse,
		method: tc.Method.String(), lr: s.cfg.LearningRate, frozen: slices.Clone(s.cfg.Frozen),
		restarts: s.restarts, restart: s.restart, followers: s.hub.Count(),
		stochastic: tc.Method == (train.SVI{}), modelIter: pb.iter, estimate: s.opt.estimate, epochs: s.opt.epochs,
	}
	if c, ok := tc.Evaluator.(interface{ Contributing() int }); ok { // a fit on worker processes (Options.Shards)
		p.workers = c.Contributing()
	}
	s.hub.SetState(&forkState{cfg: s.cfg, pub: p})
	s.setLatest(p)
	s.playing.Store(s.opt.running)
	s.published.Add(1)
	if s.frames.Put(p) {
		s.dropped.Add(1)
	}
}

// refresh brings the publisher up to the trainer's model: a private copy
// of it, the optimizer's evaluation of it and its diagnosis, made anew
// only when the model has changed since the last time. Between an SVI
// fit's checks the model steps on minibatches and no step evaluates it
// on every row; evaluating it here would cost a pass over every row per
// picture (seconds of CPU at a million rows, for each of many a second): the
// publisher shows the last check's model instead, whose bound is exact
// (train.Trainer.Checked), and the frame says so.
func (s *session) refresh() *publisher {
	pb := &s.pub
	key := modelVersion{tr: s.tr, steps: s.iterations.Load(), edits: pb.edits}
	if pb.model != nil && key == pb.key {
		return pb
	}
	newTrainer := pb.key.tr != s.tr
	pb.key = key
	if s.tr.Config().Method == (train.SVI{}) && newTrainer && s.opt.running && !s.opt.held && s.sampled() {
		// A new stochastic fit of data shown by a sample, about to step:
		// its first picture comes now, without the bound, and the first
		// step makes the start's evaluation on every row
		// (train.Trainer.Start: seconds at a million rows), which the
		// next frame shows. A sampling view predicts its rows itself
		// (view.RowSampler); the others draw the evaluation's messages.
		pb.checked, pb.model, pb.iter = nil, s.tr.Model().CloneParams(), s.tr.Iter()
		pb.version++
		pb.eval, pb.evalErr, pb.collapse = nil, nil, nil
		return pb
	}
	if s.tr.Config().Method == (train.SVI{}) {
		// SVI's start is an evaluation on every row without a gradient,
		// the publisher's own: made once, by the trainer, it serves both
		// (a failure is the evaluation's below, said in the frame).
		_ = s.tr.Start()
	}
	// The checked model is the trainer's too after a check that rose (it
	// was just evaluated there) and after a return to the best check.
	if m, res, iter, ok := s.tr.Checked(); ok {
		if m != pb.checked {
			// A copy: the trainer's is its own (Checked).
			pb.checked, pb.model, pb.iter = m, m.CloneParams(), iter
			pb.version++
			pb.eval, pb.evalErr = train.NewEvaluation(res), nil
			pb.collapse = view.Diagnose(pb.model, pb.eval)
		}
		return pb
	}
	// CloneParams shares the data, which nothing writes into: 2 × 8.8
	// MB of Frey faces are not copied for every frame.
	pb.checked, pb.model, pb.iter = nil, s.tr.Model().CloneParams(), s.tr.Iter()
	pb.version++
	pb.eval, pb.evalErr = s.tr.Evaluation()
	pb.collapse = view.Diagnose(pb.model, pb.eval)
	return pb
}

// setLatest makes p the latest publication and wakes whoever waits for a
// newer one (view.Session.Latest).
func (s *session) setLatest(p *publication) {
	s.changedMu.Lock()
	defer s.changedMu.Unlock()
	s.latest.Store(p)
	if s.changed != nil {
		close(s.changed)
	}
	s.changed = make(chan struct{})
}

// sampled reports whether the session's view shows its data by a sample
// of the rows (view.RowSampler).
func (s *session) sampled() bool {
	rs, ok := s.view.(view.RowSampler)
	return ok && rs.SampledRows(s.data) != nil
}
