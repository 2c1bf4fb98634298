package view

import (
	"context"
	"fmt"
	"math"
	"slices"

	"dgpviz/internal/engine"
	"dgpviz/internal/train"
	"dgpviz/internal/wire"
)

// A preset fits a few short restarts and keeps the one with the best
// bound (train.Preset.Start); re-running gives a different start each
// time and the bound chooses among them. A session keeps every restart's
// model, with its bound, what it started from and, where the view can
// judge it, a score, so that the page can list them and the "restart"
// command can switch the live session to another one.

// Restart is one restart of a preset.
type Restart struct {
	Init    train.InitConfig
	Model   *engine.Model // nil when the restart failed
	Iters   int           // optimizer iterations it ran
	Bound   float64       // its model's bound
	Score   float64       // the view's score of its model (NaN: none)
	Failure string        // why it has no model
	// Start is what its first hidden layer started from: "pca" (the
	// outputs' principal components) or "linear" (the inputs).
	Start string
}

// Restarts are the restarts of one model build, never changed after they
// are made (snapshots share them).
type Restarts struct {
	List   []Restart
	Chosen int // the restart the preset kept (best bound), 0-based
	// ScoreName names Score in the page ("" when the view has no score).
	ScoreName string
}

// Pick returns restart k (numbered from 1) of r, for the "restart"
// command to switch a session to, or an error for people: the model was
// not chosen among restarts (r nil), k is missing or out of range, or the
// restart failed.
func (r *Restarts) Pick(k *int) (Restart, error) {
	switch {
	case r == nil:
		return Restart{}, fmt.Errorf("restart: this session's model was not chosen among restarts (a preset runs them)")
	case k == nil:
		return Restart{}, fmt.Errorf("restart: missing \"restart\" (1…%d)", len(r.List))
	case *k < 1 || *k > len(r.List):
		return Restart{}, fmt.Errorf("restart: there is no restart %d (the preset ran restarts 1…%d)", *k, len(r.List))
	}
	e := r.List[*k-1]
	if e.Model == nil {
		return Restart{}, fmt.Errorf("restart: restart %d has no model: %s", *k, e.Failure)
	}
	return e, nil
}

// Count returns how many restarts' models r keeps (0 for nil: a model
// not chosen among restarts).
func (r *Restarts) Count() int {
	if r == nil {
		return 0
	}
	return len(r.List)
}

// NewRestarts turns a preset's restart reports into Restarts (copies of
// their models: the session trains the chosen one), scoring each model
// with score (nil: no score). It returns nil for fewer than two restarts.
func NewRestarts(reps []train.RestartReport, q int, scoreName string, score func(*engine.Model, *engine.Result) float64) *Restarts {
	if len(reps) < 2 {
		return nil
	}
	rs := &Restarts{List: make([]Restart, len(reps)), Chosen: -1, ScoreName: scoreName}
	ev := engine.Evaluator{Workers: 1}
	for r, rep := range reps {
		e := &rs.List[r]
		e.Init, e.Iters, e.Bound, e.Score = rep.Init, rep.Report.Iters, math.NaN(), math.NaN()
		e.Start = rep.Init.FirstHiddenStart(q)
		if rep.Err != nil || rep.Model == nil {
			e.Failure = "it failed"
			if rep.Err != nil {
				e.Failure = rep.Err.Error()
			}
			continue
		}
		e.Model = rep.Model.CloneParams() // the live model is trained on; these stay
		res, _, err := ev.Evaluate(e.Model, engine.Options{})
		if err != nil {
			e.Failure, e.Model = err.Error(), nil
			continue
		}
		e.Bound = res.Bound
		if score != nil {
			e.Score = score(e.Model, res)
		}
		// The preset's rule (train.FitRestarts): the best bound, the first
		// among equals.
		if rs.Chosen < 0 || e.Bound > rs.List[rs.Chosen].Bound {
			rs.Chosen = r
		}
	}
	if rs.Chosen < 0 {
		return nil
	}
	return rs
}

// RestartRow is one row of a frame's restart table.
type RestartRow struct {
	Restart int       `json:"restart"`           // 1-based, as the page and `viz fit` number them
	Seed    uint64    `json:"seed"`              // the restart's initialisation seed
	Start   string    `json:"start"`             // what the first hidden layer started from: "pca" or "linear"
	Iters   int       `json:"iters"`             // optimizer iterations it ran
	Bound   *wire.Num `json:"bound,omitempty"`   // its model's bound (absent: failed)
	Score   *wire.Num `json:"score,omitempty"`   // the view's score of its model
	Failure string    `json:"failure,omitempty"` // why it has no model
}

// RestartsFrame is a frame's restart table.
type RestartsFrame struct {
	Chosen    int          `json:"chosen"`               // the restart the preset kept (1-based)
	Live      int          `json:"live"`                 // the restart the session's model started from (1-based; 0: none)
	ScoreName string       `json:"score_name,omitempty"` // what the score column is
	List      []RestartRow `json:"list"`
}

// Frame returns the restart table with live (0-based, −1: none) marked.
func (rs *Restarts) Frame(live int) *RestartsFrame {
	if rs == nil {
		return nil
	}
	f := &RestartsFrame{Chosen: rs.Chosen + 1, Live: live + 1, ScoreName: rs.ScoreName, List: make([]RestartRow, len(rs.List))}
	for r, e := range rs.List {
		row := RestartRow{Restart: r + 1, Seed: e.Init.Seed, Start: e.Start, Iters: e.Iters, Failure: e.Failure}
		if e.Model != nil {
			row.Bound = wire.NumPtr(e.Bound)
			if !math.IsNaN(e.Score) {
				row.Score = wire.NumPtr(e.Score)
			}
		}
		f.List[r] = row
	}
	return f
}

// StartPreset builds the first model on d with preset p sized to a (hidden
// widths and inducing points; the seed is a's): the best by bound of the
// preset's short restarts, or one start for a model without hidden
// layers. It returns every restart's report too.
func StartPreset(ctx context.Context, p train.Preset, d *Data, a Arch, workers int) (*engine.Model, []train.RestartReport, error) {
	p.Init.Hidden, p.Init.Inducing, p.Init.Seed = slices.Clone(a.Hidden), a.Inducing, a.Seed
	if len(a.Hidden) == 0 {
		p.Restarts = 1
	}
	tcfg := train.TrainerConfig{Method: train.LBFGS{}, Seed: a.Seed, Workers: max(workers, 1)}
	return p.Start(ctx, d.X, d.Y, tcfg, nil)
}
