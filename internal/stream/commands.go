package stream

import (
	"fmt"
	"math"
	"slices"

	"dgpviz/internal/admit"
	"dgpviz/internal/allviews"
	"dgpviz/internal/engine"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"
)

// Command is a message from the page (wire.Command).
type Command = wire.Command

// A command handler applies one parsed command on the session's optimizer
// goroutine and returns the acknowledgement's message, or an error that
// is sent back instead.
type commandHandler func(s *session, c Command) (string, error)

// commands lists the session's ops with their handlers, in the order
// docs/protocol.md describes them; the views add their own (view.Op). It
// is the only list of the transport's ops: Ops and ParseCommand read it.
var commands = []struct {
	op  string
	run commandHandler
}{
	{"play", (*session).cmdPlay},
	{"pause", (*session).cmdPause},
	{"hold", (*session).cmdHold},
	{"release", (*session).cmdRelease},
	{"step", (*session).cmdStep},
	{"reset", (*session).cmdReset},
	{"optimizer", (*session).cmdOptimizer},
	{"freeze", (*session).cmdFreeze},
	{"move", (*session).cmdMove},
	{"add", (*session).cmdAdd},
	{"remove", (*session).cmdRemove},
	{"undo", (*session).cmdUndo},
	{"redo", (*session).cmdRedo},
	{"architecture", (*session).cmdArchitecture},
	{"dataset", (*session).cmdDataset},
	{"restart", (*session).cmdRestart},
	{"speed", (*session).cmdSpeed},
	{"drawn", (*session).cmdDrawn},
	{"present", (*session).cmdPresent},
}

// Ops returns the names of the commands, the views' included, for
// documentation and errors.
func Ops() []string {
	out := make([]string, 0, len(commands))
	for _, c := range commands {
		out = append(out, c.op)
	}
	return append(out, allviews.Ops()...)
}

// knownOp reports whether op is a command of the session or of a view.
func knownOp(op string) bool {
	return lookupCommand(op) != nil || slices.Contains(allviews.Ops(), op)
}

func lookupCommand(op string) commandHandler {
	for _, c := range commands {
		if c.op == op {
			return c.run
		}
	}
	return nil
}

// apply runs c: a command of the session's, or of its view's.
func (s *session) apply(c Command) (string, error) {
	if h := lookupCommand(c.Op); h != nil {
		return h(s, c)
	}
	op, ok := view.FindOp(s.view, c.Op)
	switch {
	case !ok:
		return "", errNotThisView(s.view, c.Op)
	case op.Apply == nil: // an Answer op whose view came with this command's publication
		b, err := op.Answer(s.ctx, s.latest.Load().snap, c)
		if err == nil {
			s.send(outMsg{binary: true, data: b})
		}
		return "", err
	}
	return op.Apply(viewSession{s}, c)
}

// errNotThisView says that op belongs to another view than v.
func errNotThisView(v view.View, op string) error {
	return fmt.Errorf("%s: not available here: these data are shown in the %s view, which has no such command", wire.Truncate(op, 40), v.Kind())
}

func (s *session) cmdPlay(Command) (string, error) {
	s.opt.running, s.cfg.Play = true, true
	s.opt.status = train.NotTerminated
	return "playing", nil
}

func (s *session) cmdPause(Command) (string, error) {
	s.opt.running, s.cfg.Play = false, false
	return "paused", nil
}

// cmdHold holds the optimizer while a drag is under way (edits.go): the
// drag's moves are one edit, and a person's play or pause stays as it was.
func (s *session) cmdHold(Command) (string, error) {
	s.opt.held = true
	return "held for an edit", nil
}

// cmdRelease ends a hold: the optimizer goes on unless a person paused it.
func (s *session) cmdRelease(Command) (string, error) {
	s.opt.held = false
	return "released", nil
}

func (s *session) cmdSpeed(c Command) (string, error) {
	if c.Speed == nil && c.WatchRepair == nil {
		return "", fmt.Errorf("speed: missing \"speed\" (iterations per second, 0: as fast as possible) or \"watch_repair\"")
	}
	cfg := s.cfg
	if c.Speed != nil {
		cfg.Speed = *c.Speed
	}
	if c.WatchRepair != nil {
		cfg.WatchRepair = *c.WatchRepair
	}
	if err := cfg.Validate(s.srv.limits, s.srv.cat); err != nil {
		return "", err
	}
	s.cfg = cfg
	if c.Speed == nil {
		if cfg.WatchRepair {
			return fmt.Sprintf("an edit's repair runs at %d iterations per second", cfg.Speed), nil
		}
		return "an edit's repair runs as fast as it can until the bound settles", nil
	}
	if cfg.Speed == 0 {
		return "speed: as fast as possible", nil
	}
	return fmt.Sprintf("speed: at most %d iterations per second", cfg.Speed), nil
}

func (s *session) cmdStep(c Command) (string, error) {
	n := 1
	if c.N != nil {
		n = *c.N
	}
	if n < 1 || n > s.srv.limits.MaxSteps {
		return "", fmt.Errorf("step: n = %d out of range 1…%d", n, s.srv.limits.MaxSteps)
	}
	// Acknowledged now, run between commands by the optimizer loop
	// (session.run); frames show progress, and the frame after the last
	// iteration is the first to report this command as applied.
	s.opt.running, s.cfg.Play = false, false
	s.opt.steps, s.opt.stepID = n, c.ID
	s.opt.status = train.NotTerminated
	return fmt.Sprintf("stepping %d iteration(s) from %d", n, s.tr.Iter()), nil
}

func (s *session) cmdReset(c Command) (string, error) {
	cfg := s.cfg
	if c.Seed != nil {
		cfg.Seed = *c.Seed
	}
	if err := s.build(cfg, false); err != nil {
		return "", err
	}
	return fmt.Sprintf("reset with seed %d", cfg.Seed), nil
}

func (s *session) cmdOptimizer(c Command) (string, error) {
	cfg := s.cfg
	if c.Method != nil {
		m, err := train.ParseMethod(*c.Method)
		if err != nil {
			return "", fmt.Errorf("optimizer: method %q, want \"lbfgs\", \"adam\" or \"svi\"", *c.Method)
		}
		cfg.Method = m
	}
	if c.LearningRate != nil {
		cfg.LearningRate = *c.LearningRate
	}
	if c.Method == nil && c.LearningRate == nil {
		return "", fmt.Errorf("optimizer: give \"method\" and/or \"learning_rate\"")
	}
	if err := cfg.Validate(s.srv.limits, s.srv.cat); err != nil {
		return "", err
	}
	if err := s.tr.SetConfig(s.trainerConfig(cfg)); err != nil {
		return "", fmt.Errorf("optimizer: %w", err)
	}
	s.cfg = cfg
	s.carryOn()
	return fmt.Sprintf("optimizer %s, learning rate %g", cfg.Method, cfg.LearningRate), nil
}

// cmdFreeze freezes or unfreezes a parameter group; it is an edit, so
// undo gives the previous set back.
func (s *session) cmdFreeze(c Command) (string, error) {
	groups := engine.GroupNames()
	if c.Group == nil {
		return "", fmt.Errorf("freeze: missing \"group\" (one of %v)", groups)
	}
	if _, ok := engine.ParseGroup(*c.Group); !ok {
		return "", fmt.Errorf("freeze: unknown group %q (one of %v)", wire.Truncate(*c.Group, 40), groups)
	}
	frozen := c.Frozen == nil || *c.Frozen
	cfg := s.cfg
	cfg.Frozen = slices.DeleteFunc(slices.Clone(cfg.Frozen), func(g string) bool { return g == *c.Group })
	if frozen {
		cfg.Frozen = append(cfg.Frozen, *c.Group)
	}
	verb := "unfreeze"
	if frozen {
		verb = "freeze"
	}
	label := verb + " " + *c.Group
	before := s.editState(label)
	if err := s.tr.SetConfig(s.trainerConfig(cfg)); err != nil {
		return "", fmt.Errorf("freeze: %w", err)
	}
	s.cfg = cfg
	s.pushHistory(before)
	s.carryOn()
	if frozen {
		return "froze " + *c.Group, nil
	}
	return "unfroze " + *c.Group, nil
}

func (s *session) cmdArchitecture(c Command) (string, error) {
	cfg := s.cfg
	if c.Hidden == nil && c.Inducing == nil {
		return "", fmt.Errorf("architecture: give \"hidden\" and/or \"inducing\"")
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
}

func (s *session) cmdDataset(c Command) (string, error) {
	if c.Dataset == nil {
		return "", fmt.Errorf("missing \"dataset\" (one of %v)", s.srv.cat.Names())
	}
	cfg := s.cfg
	cfg.Dataset = *c.Dataset
	if next := s.srv.cat.Get(cfg.Dataset); next != nil && s.data != nil && allviews.Kind(next) != s.view.Kind() {
		// Another view: its preset's architecture, or the server's
		// default when it has none.
		cfg = admit.WithPreset(cfg, allviews.For(next, nil), s.srv.def, s.srv.limits)
	}
	if err := s.build(cfg, false); err != nil {
		return "", err
	}
	return "data set " + cfg.Dataset, nil
}

func (s *session) cmdDrawn(c Command) (string, error) {
	return "", fmt.Errorf("drawn: taken by the reader")
}

// cmdRestart switches the live session to another of the preset's
// restarts (numbered from 1). It is an edit: undo gives the model before
// the switch back.
func (s *session) cmdRestart(c Command) (string, error) {
	e, err := s.restarts.Pick(c.Restart)
	if err != nil {
		return "", err
	}
	k := *c.Restart
	before := s.editState(fmt.Sprintf("switch to restart %d", k))
	if err := s.applyModel(e.Model.CloneParams()); err != nil {
		return "", fmt.Errorf("restart: %w", err)
	}
	s.restart = k - 1
	s.pushHistory(before)
	msg := fmt.Sprintf("switched to restart %d (bound %.2f", k, e.Bound)
	if s.restarts.ScoreName != "" && !math.IsNaN(e.Score) {
		msg += fmt.Sprintf(", %s %.3f", s.restarts.ScoreName, e.Score)
	}
	return msg + ")", nil
}
