package stream

import (
	"fmt"
	"math"

	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
	"dgpviz/internal/train"

	"gonum.org/v1/gonum/mat"
)

// The robot preset's restarts. The preset fits a few short restarts and
// keeps the one with the best bound (train.Preset.Start); re-running gives
// a different latent each time and the bound chooses among them. The
// session keeps every restart's model, with its bound and the geometry
// score of its first hidden layer, so that the page can list them and the
// "restart" op can switch the live session to another one.

// restartEntry is one restart of the preset: its model as the restart left
// it and what the page shows about it.
type restartEntry struct {
	init    train.InitConfig
	model   *engine.Model // nil when the restart failed
	iters   int           // optimizer iterations the restart ran
	bound   float64       // the model's bound (as the session's frames report it)
	report  float64       // the bound the restart reported (equal to bound: Fit is deterministic)
	score   float64       // geometry score (latent.LoopClosure) of the first hidden layer; NaN: none
	failure string        // why the restart has no model
	start   string        // what the first hidden layer started from: "pca" or "linear"
}

// restartSet is the preset's restarts for one model build, never changed
// after it is made (snapshots share it).
type restartSet struct {
	list   []restartEntry
	chosen int // the restart the preset kept (best bound)
}

// buildRestarts turns the preset's restart reports, with the model each
// restart ended with, into restart entries (copies: the session trains the
// chosen one). Returns nil when there are fewer than two restarts.
func buildRestarts(best *engine.Model, reps []train.RestartReport, pos *mat.Dense) *restartSet {
	if len(reps) < 2 || best == nil {
		return nil
	}
	rs := &restartSet{list: make([]restartEntry, len(reps)), chosen: -1}
	_, q := best.X.Dims()
	for r, rep := range reps {
		e := &rs.list[r]
		e.init, e.iters, e.report, e.bound, e.score = rep.Init, rep.Report.Iters, rep.Report.Bound, math.NaN(), math.NaN()
		e.start = rep.Init.FirstHiddenStart(q)
		if rep.Err != nil {
			e.failure = rep.Err.Error()
			continue
		}
		// The preset's rule (train.FitRestarts): the best bound, the
		// first among equals.
		if rs.chosen < 0 || rep.Report.Bound > reps[rs.chosen].Report.Bound {
			rs.chosen = r
		}
	}
	if rs.chosen < 0 {
		return nil
	}
	for r := range rs.list {
		if e := &rs.list[r]; e.failure == "" {
			e.model = reps[r].Model.CloneParams() // the live model is trained on; these stay
		}
	}
	ev := engine.Evaluator{Workers: 1}
	for r := range rs.list {
		e := &rs.list[r]
		if e.model == nil {
			continue
		}
		res, _, err := ev.Evaluate(e.model, engine.Options{})
		if err != nil {
			e.failure, e.model = err.Error(), nil
			continue
		}
		e.bound = res.Bound
		if len(res.Messages) > 1 && pos != nil {
			if s, err := latent.LoopClosure(res.Messages[0].Mean, pos, latent.DefaultMinLag, latent.DefaultRadius); err == nil {
				e.score = s.Value
			}
		}
	}
	return rs
}

// restartRow is one row of a frame's restart table.
type restartRow struct {
	Restart int    `json:"restart"`           // 0-based, as `viz fit` numbers them
	Seed    uint64 `json:"seed"`              // the restart's initialisation seed
	Init    string `json:"init"`              // the first hidden layer's start: "pca" or "linear"
	Iters   int    `json:"iters"`             // optimizer iterations it ran
	Bound   *num   `json:"bound,omitempty"`   // its model's bound (absent: failed)
	Score   *num   `json:"score,omitempty"`   // geometry score of its first hidden layer
	Failure string `json:"failure,omitempty"` // why it has no model
}

// restartsFrame is a robot frame's "restarts" section.
type restartsFrame struct {
	Chosen int          `json:"chosen"` // the restart the preset kept
	Live   int          `json:"live"`   // the restart the session's model started from
	List   []restartRow `json:"list"`
}

func (rs *restartSet) frame(live int) *restartsFrame {
	if rs == nil {
		return nil
	}
	f := &restartsFrame{Chosen: rs.chosen, Live: live, List: make([]restartRow, len(rs.list))}
	for r, e := range rs.list {
		row := restartRow{Restart: r, Seed: e.init.Seed, Init: e.start, Iters: e.iters, Failure: e.failure}
		if e.model != nil {
			row.Bound = numPtr(e.bound)
			if !math.IsNaN(e.score) {
				row.Score = numPtr(e.score)
			}
		}
		f.List[r] = row
	}
	return f
}

// cmdRestart switches the live session to another restart's model. It is
// an edit: undo gives the model before the switch back.
func (s *session) cmdRestart(c Command) (string, error) {
	rs := s.restarts
	if rs == nil {
		return "", errorf("restart: this session's model was not chosen among restarts (the robot preset runs them)")
	}
	if c.Restart == nil {
		return "", errorf("restart: missing \"restart\" (0…%d)", len(rs.list)-1)
	}
	k := *c.Restart
	if k < 0 || k >= len(rs.list) {
		return "", errorf("restart: there is no restart %d (the preset ran restarts 0…%d)", k, len(rs.list)-1)
	}
	e := rs.list[k]
	if e.model == nil {
		return "", errorf("restart: restart %d has no model: %s", k, e.failure)
	}
	before := s.editState(fmt.Sprintf("switch to restart %d", k))
	if err := s.applyModel(e.model.CloneParams()); err != nil {
		return "", errorf("restart: %w", err)
	}
	s.restart = k
	s.pushHistory(before)
	return fmt.Sprintf("switched to restart %d (bound %.2f, geometry score %.3f)", k, e.bound, e.score), nil
}
