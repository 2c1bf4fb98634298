package view

import (
	"math"
	"math/rand/v2"
	"testing"

	"dgpviz/internal/engine"
	"dgpviz/internal/wire"
)

// TestCheckPoint: a point command's layer, index and value counts are
// checked against the model, with layers and points counted from 1.
func TestCheckPoint(t *testing.T) {
	m := engine.RandomModel(rand.New(rand.NewPCG(5, 6)), 10, []int{2, 3, 1}, []string{"rbf", "rbf"}, 4)
	ip := func(i int) *int { return &i }
	for _, tc := range []struct {
		c     wire.Command
		index bool
		want  string // "" : accepted
	}{
		{wire.Command{Op: "move", Layer: ip(1), Index: ip(3), Z: []float64{0, 0, 0}, Mu: []float64{1}}, true, ""},
		{wire.Command{Op: "add", Layer: ip(0), Z: []float64{0, 0}}, false, ""},
		{wire.Command{Op: "move", Index: ip(0)}, true, `move: missing "layer"`},
		{wire.Command{Op: "move", Layer: ip(2), Index: ip(0)}, true, "move: there is no layer 3 (the model has 2 layers)"},
		{wire.Command{Op: "add", Layer: ip(0), Z: []float64{0}}, false, "add: z has 1 values, but layer 1 has 2-D inputs"},
		{wire.Command{Op: "add", Layer: ip(0), Mu: []float64{0}}, false, "add: mu has 1 values, but layer 1 has 3 outputs"},
		{wire.Command{Op: "remove", Layer: ip(0)}, true, `remove: missing "index"`},
		{wire.Command{Op: "remove", Layer: ip(0), Index: ip(4)}, true, "remove: layer 1 has no inducing point 5 (it has 4)"},
	} {
		li, j, err := CheckPoint(m, tc.c, tc.index)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.c, err)
		case tc.want == "" && (li != *tc.c.Layer || (tc.index && j != *tc.c.Index) || (!tc.index && j != -1)):
			t.Errorf("%+v: layer %d, point %d", tc.c, li, j)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%+v: error %v, want %q", tc.c, err, tc.want)
		}
	}
}

// TestMovePoint: a move never returns its base nor changes it; moving a
// point back to where it was, to float32 precision, gives the base's
// parameters exactly; keep_u keeps q(u) as it is, and mu pulls q(u)'s mean
// at the point.
func TestMovePoint(t *testing.T) {
	base := engine.RandomModel(rand.New(rand.NewPCG(7, 8)), 12, []int{1, 2}, []string{"rbf"}, 3)
	z0 := append([]float64(nil), base.Layers[0].InducingInputs.RawRowView(1)...)
	mu0 := append([]float64(nil), base.Layers[0].QMu.RawRowView(1)...)
	back := []float64{float64(float32(z0[0]))}
	m, err := MovePoint(base, 0, 1, wire.Command{Z: back})
	if err != nil {
		t.Fatal(err)
	}
	if m == base || m.Layers[0].InducingInputs == base.Layers[0].InducingInputs {
		t.Fatal("the move shares the base's parameters")
	}
	if got := m.Layers[0].InducingInputs.At(1, 0); got != z0[0] {
		t.Errorf("moved back to %v, want exactly %v", got, z0[0])
	}
	keep := true
	m, err = MovePoint(base, 0, 1, wire.Command{Z: []float64{z0[0] + 0.3}, KeepU: &keep})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Layers[0].InducingInputs.At(1, 0); got != z0[0]+0.3 {
		t.Errorf("moved to %v, want %v", got, z0[0]+0.3)
	}
	for k := range mu0 {
		if m.Layers[0].QMu.At(1, k) != mu0[k] {
			t.Errorf("keep_u changed q(u)'s mean: %v, want %v", m.Layers[0].QMu.RawRowView(1), mu0)
			break
		}
	}
	if base.Layers[0].InducingInputs.At(1, 0) != z0[0] {
		t.Error("the move changed its base")
	}
	pull := []float64{mu0[0] + 1, mu0[1] - 1}
	if m, err = MovePoint(base, 0, 1, wire.Command{Mu: pull}); err != nil {
		t.Fatal(err)
	}
	for k := range pull { // up to the jitter's share (engine.PullInducing)
		if got := m.Layers[0].QMu.At(1, k); math.Abs(got-pull[k]) > 1e-3 {
			t.Errorf("pulled through %v: q(u)'s mean at the point is %v", pull, m.Layers[0].QMu.RawRowView(1))
			break
		}
	}
}

// TestEditReadout: the readout names the edit it reads, with undo and
// redo saying so, and has no layer when there is no edit.
func TestEditReadout(t *testing.T) {
	m := engine.RandomModel(rand.New(rand.NewPCG(9, 10)), 8, []int{1, 1}, []string{"rbf"}, 2)
	h := EditHistory{Undo: []EditState{{Label: "move of inducing point 1 of layer 1", Model: m, Layer: 0}},
		Redo: []EditState{{Label: "edit of the data", Model: m, Layer: -1, DataEdit: true}}}
	for _, tc := range []struct {
		op   string
		want EditReadout
	}{
		{"move", EditReadout{Label: "move of inducing point 1 of layer 1", Layer: 0}},
		{"redo", EditReadout{Label: "redo of the move of inducing point 1 of layer 1", Layer: 0}},
		{"undo", EditReadout{Label: "undo of the edit of the data", Layer: -1, DataEdit: true}},
	} {
		if got := h.Readout(tc.op); got.Label != tc.want.Label || got.Layer != tc.want.Layer || got.DataEdit != tc.want.DataEdit {
			t.Errorf("%s: %+v, want %+v", tc.op, got, tc.want)
		}
	}
	if got := (&EditHistory{}).Readout("undo"); got.Layer != -1 || got.Label != "undo of the " {
		t.Errorf("no edit: %+v", got)
	}
}
