package stream

import (
	"fmt"
	"slices"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/view"

	"gonum.org/v1/gonum/mat"
)

// The session's side of model edits: it checks a command's arguments
// against the model and the limits, calls the engine's edit (which keeps
// q(u) a sensible posterior), hands the result to the optimizer and keeps
// the state before the edit for undo. A drag is one edit: the commands of
// one drag all start from the model before it, so dragging a point away
// and back restores the model exactly.

// editState captures the session's current state under a label.
func (s *session) editState(label string) view.EditState {
	return view.EditState{Label: label, Model: s.tr.Model().CloneParams(), Frozen: slices.Clone(s.cfg.Frozen), Data: s.data, Restart: s.restart, Layer: -1}
}

// pushHistory records the state before an edit; a new edit clears redo.
func (s *session) pushHistory(e view.EditState) {
	s.hist.Push(e, s.data, admit.MaxHistory, admit.MaxHistoryBytes)
}

// trimHistory drops the oldest undo states beyond the bounds.
func (s *session) trimHistory() { s.hist.Trim(s.data, admit.MaxHistory, admit.MaxHistoryBytes) }

// applyModel hands an edited model to the optimizer, which resets its
// memory; the optimizer carries on from it by itself unless a person
// paused it (carryOn).
func (s *session) applyModel(m *engine.Model) error {
	if err := s.tr.SetModel(m); err != nil {
		return err
	}
	s.pub.edits++
	s.carryOn()
	s.opt.paced = s.cfg.WatchRepair
	return nil
}

// checkPoint checks a command's layer (and, with index, inducing point)
// against the current model (view.CheckPoint).
func (s *session) checkPoint(c Command, index bool) (li, j int, err error) {
	return view.CheckPoint(s.tr.Model(), c, index)
}

// cmdMove moves inducing point index of layer: z moves its input keeping
// the function (q(u) projected to the new inputs; with keep_u, q(u) stays
// as it is), mu pulls the function through mu at the point. Consecutive
// moves of the same point with no optimizer step between them are one
// drag: each starts from the model before the drag.
func (s *session) cmdMove(c Command) (string, error) {
	li, j, err := s.checkPoint(c, true)
	if err != nil {
		return "", err
	}
	if c.Z == nil && c.Mu == nil {
		return "", fmt.Errorf("move: give \"z\" (move the input) and/or \"mu\" (pull the function)")
	}
	keepU := c.KeepU != nil && *c.KeepU
	key := fmt.Sprintf("move %d %d %t", li, j, keepU)
	label := fmt.Sprintf("move of inducing point %d of layer %d", j+1, li+1)
	continued := s.hist.Drag != nil && s.hist.Drag.Key == key && s.hist.Drag.Iter == s.tr.Iter() && s.hist.Drag.Undo == len(s.hist.Undo)
	var base *engine.Model
	if continued {
		base = s.hist.Drag.Model
	} else {
		before := s.editState(label)
		before.Layer = li
		base = before.Model
		defer func() {
			if err == nil {
				s.pushHistory(before)
				s.hist.Drag = &view.DragBase{Key: key, Model: base, Iter: s.tr.Iter(), Undo: len(s.hist.Undo)}
			}
		}()
	}
	m, err := view.MovePoint(base, li, j, c)
	if err != nil {
		return "", fmt.Errorf("move: %w", err)
	}
	if err = s.applyModel(m); err != nil {
		return "", fmt.Errorf("move: %w", err)
	}
	if continued {
		s.hist.Drag.Iter = s.tr.Iter()
	}
	verb := "moved"
	if c.Z == nil {
		verb = "pulled the function at"
	}
	return fmt.Sprintf("%s inducing point %d of layer %d", verb, j+1, li+1), nil
}

// cmdAdd adds an inducing point at z with q(u) the joint posterior there
// (mu, if given, pulls the function through it).
func (s *session) cmdAdd(c Command) (string, error) {
	li, _, err := s.checkPoint(c, false)
	if err != nil {
		return "", err
	}
	if c.Z == nil {
		return "", fmt.Errorf("add: missing \"z\"")
	}
	mz, _, _ := s.tr.Model().Layers[li].Dims()
	if mz+1 > s.srv.limits.MaxInducing {
		return "", fmt.Errorf("add: layer %d already has %d inducing points, the limit of inducing points", li+1, mz)
	}
	label := fmt.Sprintf("addition of inducing point %d to layer %d", mz+1, li+1)
	if err := s.edit(c.Op, label, li, func(m *engine.Model) (*engine.Model, error) { return engine.AddInducing(m, li, c.Z, c.Mu) }); err != nil {
		return "", err
	}
	return fmt.Sprintf("added inducing point %d to layer %d", mz+1, li+1), nil
}

// cmdRemove removes an inducing point, marginalising it out of q(u).
func (s *session) cmdRemove(c Command) (string, error) {
	li, j, err := s.checkPoint(c, true)
	if err != nil {
		return "", err
	}
	if mz, _, _ := s.tr.Model().Layers[li].Dims(); mz == 1 {
		return "", fmt.Errorf("remove: layer %d has only one inducing point", li+1)
	}
	label := fmt.Sprintf("removal of inducing point %d of layer %d", j+1, li+1)
	if err := s.edit(c.Op, label, li, func(m *engine.Model) (*engine.Model, error) { return engine.RemoveInducing(m, li, j) }); err != nil {
		return "", err
	}
	return fmt.Sprintf("removed inducing point %d of layer %d", j+1, li+1), nil
}

// edit applies one undoable edit of layer li: f makes the new model from a
// snapshot of the current one (which the history keeps under label), and
// the optimizer carries on from the result.
func (s *session) edit(op, label string, li int, f func(*engine.Model) (*engine.Model, error)) error {
	before := s.editState(label)
	before.Layer = li
	m, err := f(before.Model)
	if err == nil {
		err = s.applyModel(m)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	s.pushHistory(before)
	return nil
}

// restore makes e the session's state: its model (a clone, bit for bit
// the same parameters), frozen groups and data.
func (s *session) restore(e view.EditState) error {
	if e.Data != s.data {
		n, q, d := e.Data.Dims()
		if err := s.grow(s.cfg, n, q, d); err != nil { // the budgets (budget.go)
			return err
		}
	}
	cfg := s.cfg
	cfg.Frozen = slices.Clone(e.Frozen)
	if err := s.tr.SetConfig(s.trainerConfig(cfg)); err != nil {
		return err
	}
	s.cfg = cfg
	if err := s.applyModel(e.Model.CloneParams()); err != nil {
		return err
	}
	s.restart = e.Restart
	if e.Data != s.data {
		s.data = e.Data
		if err := s.sendSetup(); err != nil {
			return err
		}
	}
	return nil
}

func (s *session) cmdUndo(Command) (string, error) {
	return s.travel(&s.hist.Undo, &s.hist.Redo, "undo", "undid")
}

func (s *session) cmdRedo(Command) (string, error) {
	return s.travel(&s.hist.Redo, &s.hist.Undo, "redo", "redid")
}

// travel restores the newest state of from and keeps the current one in
// to: undo and redo are the same move in opposite directions.
func (s *session) travel(from, to *[]view.EditState, op, done string) (string, error) {
	if len(*from) == 0 {
		return "", fmt.Errorf("%s: nothing to %s", op, op)
	}
	e := (*from)[len(*from)-1]
	cur := s.editState(e.Label)
	cur.Layer, cur.DataEdit = e.Layer, e.DataEdit
	if err := s.restore(e); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	*from = (*from)[:len(*from)-1]
	*to = append(*to, cur)
	s.hist.Drag = nil
	s.trimHistory()
	return done + " the " + e.Label, nil
}

// editData is view.Session's EditData: x, y (normalised units; the
// normalisation stays the session's) become the working data, and fit's
// model of them (the model's parameters kept) the live one.
func (s *session) editData(label string, x, y *mat.Dense, edited bool, fit func(m *engine.Model, x, y *mat.Dense) (*engine.Model, error)) error {
	n, q := x.Dims()
	_, d := y.Dims()
	if n > s.srv.limits.MaxRows {
		return fmt.Errorf("the data would have %d rows, more than the limit of %d rows (the server's %s raises it)", n, s.srv.limits.MaxRows, dataset.RowsFlag)
	}
	if err := s.grow(s.cfg, n, q, d); err != nil { // the budgets, before the memory is taken (budget.go)
		return err
	}
	nd := s.data.WithPoints(s.nextDataID(), x, y, edited)
	before := s.editState(label)
	before.DataEdit = true
	m, err := fit(before.Model, nd.X, nd.Y)
	if err == nil {
		err = s.applyModel(m)
	}
	if err != nil {
		_, q0, d0 := s.data.Dims()
		s.grow(s.cfg, s.data.X.RawMatrix().Rows, q0, d0) // back to what it holds
		return fmt.Errorf("data: %w", err)
	}
	s.data = nd
	if err := s.sendSetup(); err != nil {
		return err
	}
	s.pushHistory(before)
	return nil
}

// An edit's readout (view.EditReadout): the bound and its terms just
// before and just after the edit, recorded here for every edit.

// editOps are the transport's commands that may edit the model; their
// readout needs the bound before them, as do the views' ops marked Edits.
// Another view op that edits (view.Session.Edit) has its readout without
// the "before".
var editOps = map[string]bool{"move": true, "add": true, "remove": true, "undo": true, "redo": true, "restart": true}

// editDelta is the last edit's readout (view.EditReadout) with the drag
// it belongs to, if any. It is never changed once published: a drag's
// next move makes a new one with the same Seq and Before.
type editDelta struct {
	view.EditReadout
	drag *view.DragBase
}

// currentTerms returns the terms of the model as it stands (nil when it
// cannot be evaluated).
func (s *session) currentTerms() *view.BoundTerms {
	return view.BoundTermsOf(s.refresh().eval)
}

// recordEdit makes the readout of the edit command c just made: before is
// the model's terms before it (nil: unknown), the edited model's are
// evaluated now (and published with it). A drag keeps its first move's
// "before" and its number.
func (s *session) recordEdit(c Command, before *view.BoundTerms) {
	d := &editDelta{EditReadout: s.hist.Readout(c.Op)}
	d.Iter, d.Before = s.tr.Iter(), before
	if c.Op == "move" && s.hist.Drag != nil {
		if l := s.lastEdit; l != nil && l.drag == s.hist.Drag {
			d.Seq, d.Before = l.Seq, l.Before
		}
		d.drag = s.hist.Drag
	}
	if d.Seq == 0 {
		s.editSeq++
		d.Seq = s.editSeq
	}
	d.After = view.BoundTermsOf(s.refresh().eval)
	s.lastEdit = d
}
