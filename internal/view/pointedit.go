package view

import (
	"fmt"

	"dgpviz/internal/engine"
	"dgpviz/internal/wire"
)

// The inducing-point edits' model side: a command's arguments checked
// against the model, and the moved model made from the model before the
// edit. The transport keeps the history and hands the result to the
// optimizer.

// CheckPoint checks a command's layer (and, with index, inducing point)
// against m. Its errors count layers and points from 1, as the page does.
func CheckPoint(m *engine.Model, c wire.Command, index bool) (li, j int, err error) {
	if c.Layer == nil {
		return 0, 0, fmt.Errorf("%s: missing \"layer\"", c.Op)
	}
	li = *c.Layer
	if li < 0 || li >= len(m.Layers) {
		return 0, 0, fmt.Errorf("%s: there is no layer %d (the model has %d layers)", c.Op, li+1, len(m.Layers))
	}
	mz, q, d := m.Layers[li].Dims()
	if c.Z != nil && len(c.Z) != q {
		return 0, 0, fmt.Errorf("%s: z has %d values, but layer %d has %d-D inputs", c.Op, len(c.Z), li+1, q)
	}
	if c.Mu != nil && len(c.Mu) != d {
		return 0, 0, fmt.Errorf("%s: mu has %d values, but layer %d has %d outputs", c.Op, len(c.Mu), li+1, d)
	}
	if !index {
		return li, -1, nil
	}
	if c.Index == nil {
		return 0, 0, fmt.Errorf("%s: missing \"index\"", c.Op)
	}
	j = *c.Index
	if j < 0 || j >= mz {
		return 0, 0, fmt.Errorf("%s: layer %d has no inducing point %d (it has %d)", c.Op, li+1, j+1, mz)
	}
	return li, j, nil
}

// MovePoint returns base with inducing point j of layer li moved as c
// says (checked by CheckPoint): z moves its input keeping the function
// (q(u) projected to the new inputs; with keep_u, q(u) stays as it is),
// mu pulls the function through mu at the point. The result is never
// base, which the caller keeps (a drag's base); c's values within float32
// precision of base's are snapped to them (Snap).
func MovePoint(base *engine.Model, li, j int, c wire.Command) (*engine.Model, error) {
	Snap(c.Z, base.Layers[li].InducingInputs.RawRowView(j))
	Snap(c.Mu, base.Layers[li].QMu.RawRowView(j))
	m := base
	var err error
	if c.Z != nil {
		if c.KeepU != nil && *c.KeepU {
			m, err = engine.MoveInducingKeepU(m, li, j, c.Z)
		} else {
			m, err = engine.MoveInducing(m, li, j, c.Z)
		}
		if err != nil {
			return nil, err
		}
	}
	if c.Mu != nil {
		if m, err = engine.PullInducing(m, li, j, c.Mu); err != nil {
			return nil, err
		}
	}
	if m == base { // the trainer takes ownership: never hand it the base
		m = base.CloneParams()
	}
	return m, nil
}
