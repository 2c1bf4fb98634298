package view

import (
	"math/rand/v2"
	"testing"

	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// TestEditStateBytes: a state counts its parameters (Z: m×q, q(u) means
// m×d, factors d·m²) and its data only when they are not the current data.
func TestEditStateBytes(t *testing.T) {
	m := engine.RandomModel(rand.New(rand.NewPCG(1, 2)), 10, []int{2, 3, 1}, []string{"rbf", "rbf"}, 4)
	cur := &Data{X: mat.NewDense(10, 2, nil), Y: mat.NewDense(10, 1, nil)}
	old := &Data{X: mat.NewDense(7, 2, nil), Y: mat.NewDense(7, 1, nil)}
	params := 8 * ((4*2 + 4*3 + 3*16) + (4*3 + 4*1 + 1*16))
	if got := (EditState{Model: m, Data: cur}).Bytes(cur); got != params {
		t.Errorf("with the current data: %d bytes, want %d", got, params)
	}
	if got, want := (EditState{Model: m, Data: old}).Bytes(cur), params+8*7*3; got != want {
		t.Errorf("with other data: %d bytes, want %d", got, want)
	}
}

// TestEditHistoryTrim: the history keeps at most maxStates states, drops
// the oldest while it holds more than maxBytes (keeping the newest), a new
// edit clears redo, and a drag whose entry is dropped is forgotten.
func TestEditHistoryTrim(t *testing.T) {
	m := engine.RandomModel(rand.New(rand.NewPCG(3, 4)), 10, []int{1, 1}, []string{"rbf"}, 2)
	cur := &Data{X: mat.NewDense(10, 1, nil), Y: mat.NewDense(10, 1, nil)}
	one := EditState{Model: m, Data: cur}.Bytes(cur)
	var h EditHistory
	h.Redo = []EditState{{Label: "r", Model: m, Data: cur}}
	for i := range 5 {
		h.Push(EditState{Label: string(rune('a' + i)), Model: m, Data: cur}, cur, 3, 100*one)
	}
	if len(h.Redo) != 0 {
		t.Errorf("a new edit left %d redo states", len(h.Redo))
	}
	if len(h.Undo) != 3 || h.Undo[0].Label != "c" || h.Undo[2].Label != "e" {
		t.Fatalf("undo after 5 edits with room for 3: %v, want c d e", labels(h.Undo))
	}
	h.Drag = &DragBase{Undo: 3}
	h.Trim(cur, 3, 2*one)
	if len(h.Undo) != 2 || h.Undo[0].Label != "d" {
		t.Errorf("undo with room for 2 states' bytes: %v, want d e", labels(h.Undo))
	}
	if h.Drag != nil {
		t.Error("the drag outlived its entry")
	}
	h.Trim(cur, 3, 0)
	if len(h.Undo) != 1 || h.Undo[0].Label != "e" {
		t.Errorf("undo with no bytes to spare: %v, want the newest, e", labels(h.Undo))
	}
	h.Clear()
	if h.Undo != nil || h.Redo != nil || h.Drag != nil {
		t.Error("Clear kept something")
	}
}

func labels(st []EditState) []string {
	var l []string
	for _, e := range st {
		l = append(l, e.Label)
	}
	return l
}

// TestSnap: values within float32 precision of exact become exact, all of
// them or none; nil stays nil.
func TestSnap(t *testing.T) {
	exact := []float64{0.1234567891234, -3.000000000001, 7}
	v := []float64{float64(float32(exact[0])), float64(float32(exact[1]))}
	Snap(v, exact)
	if v[0] != exact[0] || v[1] != exact[1] {
		t.Errorf("float32 copies snapped to %v, want %v", v, exact[:2])
	}
	far := []float64{float64(float32(exact[0])), -2.9}
	Snap(far, exact)
	if far[0] == exact[0] || far[1] != -2.9 {
		t.Errorf("a moved point snapped: %v", far)
	}
	Snap(nil, exact)
}
