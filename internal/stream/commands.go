package stream

import (
	"fmt"
	"slices"

	"dgpviz/internal/engine"
	"dgpviz/internal/train"
)

// A command handler applies one parsed command on the session's optimizer
// goroutine and returns the acknowledgement's message, or an error that
// is sent back instead.
type commandHandler func(s *session, c Command) (string, error)

// commands lists every op with its handler, in the order docs/protocol.md
// describes them. It is the only list of ops: Ops and ParseCommand read it.
var commands = []struct {
	op  string
	run commandHandler
}{
	{"play", (*session).cmdPlay},
	{"pause", (*session).cmdPause},
	{"step", (*session).cmdStep},
	{"reset", (*session).cmdReset},
	{"optimizer", (*session).cmdOptimizer},
	{"freeze", (*session).cmdFreeze},
	{"move", (*session).cmdMove},
	{"add", (*session).cmdAdd},
	{"remove", (*session).cmdRemove},
	{"undo", (*session).cmdUndo},
	{"redo", (*session).cmdRedo},
	{"add_data", (*session).cmdAddData},
	{"remove_data", (*session).cmdRemoveData},
	{"move_data", (*session).cmdMoveData},
	{"reset_data", (*session).cmdResetData},
	{"architecture", (*session).cmdArchitecture},
	{"dataset", (*session).cmdDataset},
	{"restart", (*session).cmdRestart},
	{"speed", (*session).cmdSpeed},
	{"message_figure", (*session).figureCommand},
	{"message_figure_preset", (*session).figureCommand},
	{"fit_density", (*session).densityCommand},
	{"compare", (*session).compareCommand},
	{"message_figure_off", (*session).figureCommand},
	{"decode", (*session).cmdDecode},
	{"drawn", (*session).cmdDrawn},
	{"present", (*session).cmdPresent},
}

// Ops returns the names of the commands, for documentation and errors.
func Ops() []string {
	out := make([]string, len(commands))
	for i, c := range commands {
		out[i] = c.op
	}
	return out
}

func lookupCommand(op string) commandHandler {
	for _, c := range commands {
		if c.op == op {
			return c.run
		}
	}
	return nil
}

func (s *session) apply(c Command) (string, error) {
	h := lookupCommand(c.Op)
	if h == nil {
		return "", errorf("unknown op %q", truncate(c.Op, 40))
	}
	return h(s, c)
}

func (s *session) cmdPlay(Command) (string, error) {
	s.running, s.cfg.Play = true, true
	s.status = train.NotTerminated
	return "playing", nil
}

func (s *session) cmdPause(Command) (string, error) {
	s.running, s.cfg.Play = false, false
	return "paused", nil
}

func (s *session) cmdSpeed(c Command) (string, error) {
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
}

func (s *session) cmdStep(c Command) (string, error) {
	n := 1
	if c.N != nil {
		n = *c.N
	}
	if n < 1 || n > s.srv.limits.MaxSteps {
		return "", errorf("step: n = %d out of range 1…%d", n, s.srv.limits.MaxSteps)
	}
	// Acknowledged now, run between commands by the optimizer loop
	// (session.run); frames show progress, and the frame after the last
	// iteration is the first to report this command as applied.
	s.running, s.cfg.Play = false, false
	s.steps, s.stepID = n, c.ID
	s.status = train.NotTerminated
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
			return "", errorf("optimizer: method %q, want \"lbfgs\" or \"adam\"", *c.Method)
		}
		cfg.Method = m
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
}

// cmdFreeze freezes or unfreezes a parameter group; it is an edit, so
// undo gives the previous set back.
func (s *session) cmdFreeze(c Command) (string, error) {
	groups := engine.GroupNames()
	if c.Group == nil {
		return "", errorf("freeze: missing \"group\" (one of %v)", groups)
	}
	if _, ok := engine.ParseGroup(*c.Group); !ok {
		return "", errorf("freeze: unknown group %q (one of %v)", truncate(*c.Group, 40), groups)
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
		return "", errorf("freeze: %w", err)
	}
	s.cfg = cfg
	s.pushHistory(before)
	if frozen {
		return "froze " + *c.Group, nil
	}
	return "unfroze " + *c.Group, nil
}

func (s *session) cmdArchitecture(c Command) (string, error) {
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
}

func (s *session) cmdDataset(c Command) (string, error) {
	if c.Dataset == nil {
		return "", errorf("dataset: missing \"dataset\" (one of %v)", s.srv.cat.Names())
	}
	cfg := s.cfg
	cfg.Dataset = *c.Dataset
	wasRobot := s.data != nil && IsRobot(s.data.ds)
	wasFrey := s.data != nil && IsFrey(s.data.ds)
	next := s.srv.cat.Get(cfg.Dataset)
	switch isRobot, isFrey := IsRobot(next), IsFrey(next); {
	case isRobot && !wasRobot:
		cfg = RobotConfig(cfg, s.srv.limits) // switching to robot data: the paper's preset
	case isFrey && !wasFrey:
		cfg = FreyConfig(cfg, s.srv.limits) // switching to the Frey faces: the paper's autoencoder
	case !isRobot && !isFrey && (wasRobot || wasFrey):
		// Leaving a preset: the demo's architecture, not the preset's.
		def := DefaultConfig()
		cfg.Hidden, cfg.Inducing = def.Hidden, def.Inducing
	}
	if err := s.build(cfg, false); err != nil {
		return "", err
	}
	return "data set " + cfg.Dataset, nil
}

// cmdDecode is never reached: the reader hands decode commands to the
// decode goroutine (decode.go), which answers them. It is listed so that
// ParseCommand and Ops know the op.
func (s *session) cmdDecode(c Command) (string, error) {
	return "", errorf("decode: answered by the decode goroutine")
}

func (s *session) cmdDrawn(c Command) (string, error) {
	return "", errorf("drawn: taken by the reader")
}

// drawnSeq opens gate for the frame a "drawn" command names.
func drawnSeq(c Command, gate *drawGate) error {
	if c.Seq == nil {
		return errorf("drawn: missing \"seq\" (the sequence number of the frame drawn)")
	}
	gate.drawn(*c.Seq)
	return nil
}
