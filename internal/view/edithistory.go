package view

import (
	"math"
	"slices"

	"dgpviz/internal/engine"
)

// A session's edit history: the states undo and redo restore, and the
// drag in progress. A drag is one edit: the commands of one drag all start
// from the model before it (DragBase), so dragging a point away and back
// restores the model exactly. The transport keeps one per session and
// applies its states; what a state holds and how far back it reaches are
// decided here.

// EditState is what undo restores: the model, the frozen groups and the
// data, all private to the history (a restore hands clones on).
type EditState struct {
	Label  string
	Model  *engine.Model
	Frozen []string
	Data   *Data
	// Restart is the restart the model started from (the "restart" op).
	Restart int
	// Layer is the layer the edit changed (-1: none in particular) and
	// DataEdit says it changed the data points: the page shows the
	// edit's readout on that panel.
	Layer    int
	DataEdit bool
}

// EditHistory is a session's undo and redo stacks and the drag in progress.
type EditHistory struct {
	Undo, Redo []EditState
	Drag       *DragBase
}

// DragBase is the model before a run of commands that continue one drag.
type DragBase struct {
	Key   string
	Model *engine.Model
	Iter  int // optimizer iterations when the drag began
	Undo  int // length of the undo stack after the drag's entry
}

// Clear forgets every edit: a new model (reset, architecture, data set) is
// not an edit of the old one.
func (h *EditHistory) Clear() { h.Undo, h.Redo, h.Drag = nil, nil, nil }

// Bytes estimates the memory the state holds: its parameters (inducing
// inputs, q(u) means and factors), and its data when they are not the
// session's current data.
func (e EditState) Bytes(current *Data) int {
	n := 0
	for _, l := range e.Model.Layers {
		mz, q, d := l.Dims()
		n += 8 * (mz*q + mz*d + d*mz*mz)
	}
	if e.Data != current && e.Data.X != nil {
		r, q := e.Data.X.Dims()
		_, d := e.Data.Y.Dims()
		n += 8 * r * (q + d)
	}
	return n
}

// Push records the state before an edit (a new edit clears redo) and
// trims the history to its bounds.
func (h *EditHistory) Push(e EditState, current *Data, maxStates, maxBytes int) {
	h.Undo = append(h.Undo, e)
	h.Redo = nil
	h.Trim(current, maxStates, maxBytes)
}

// Trim drops the oldest undo states beyond maxStates states and maxBytes
// bytes (EditState.Bytes, current being the session's data); the newest
// state always stays.
func (h *EditHistory) Trim(current *Data, maxStates, maxBytes int) {
	// slices.Delete clears what it drops: states resliced away would stay
	// reachable through the array, past the history's bounds.
	for len(h.Undo) > maxStates {
		h.Undo = slices.Delete(h.Undo, 0, 1)
	}
	for len(h.Undo) > 1 {
		total := 0
		for _, e := range h.Undo {
			total += e.Bytes(current)
		}
		for _, e := range h.Redo {
			total += e.Bytes(current)
		}
		if total <= maxBytes {
			break
		}
		h.Undo = slices.Delete(h.Undo, 0, 1)
	}
	if h.Drag != nil && h.Drag.Undo > len(h.Undo) {
		h.Drag = nil
	}
}

// Snap sets v to exact where every value of v is exact's to float32
// precision (v nil: nothing). Frames carry coordinates as float32: a drag
// back to where it began lands exactly there, so that it restores the
// model exactly.
func Snap(v, exact []float64) {
	if v == nil {
		return
	}
	for k, x := range v {
		if math.Abs(x-exact[k]) > 1e-6*math.Max(1, math.Abs(exact[k])) {
			return
		}
	}
	copy(v, exact[:len(v)])
}

// Readout begins the readout of the edit op just made (its Label, Layer
// and DataEdit) from the state the edit recorded: undo's is the newest
// redo state, redo's and every other edit's the newest undo state. Layer
// is -1 when there is none.
func (h *EditHistory) Readout(op string) EditReadout {
	var e EditState
	prefix := ""
	top := func(st []EditState) {
		if len(st) > 0 {
			e = st[len(st)-1]
		}
	}
	switch op {
	case "undo":
		top(h.Redo)
		prefix = "undo of the "
	case "redo":
		top(h.Undo)
		prefix = "redo of the "
	default:
		top(h.Undo)
	}
	r := EditReadout{Label: prefix + e.Label, Layer: e.Layer, DataEdit: e.DataEdit}
	if e.Model == nil {
		r.Layer = -1
	}
	return r
}
