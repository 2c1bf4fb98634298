package explorer

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"dgpviz/internal/engine"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"
)

// opsFixture is 5,500 rows shown by a sample, a model and every row's
// hidden means predicted directly (training rows, then held-out).
func opsFixture(t *testing.T) (*View, *view.Snapshot, [][]float64) {
	ds := walkData(5000, 500, 3)
	d := view.NewData(1, ds)
	v := New(view.NewEnv(context.Background(), 10))
	s := snapshot(t, d, true)
	f := v.factsOf(d)
	ev := engine.Evaluator{Workers: 1}
	tr, err := ev.PredictLayers(s.Model, d.X, 2)
	if err != nil {
		t.Fatal(err)
	}
	te, err := ev.PredictLayers(s.Model, f.heldOut.X, 2)
	if err != nil {
		t.Fatal(err)
	}
	var all [][]float64
	for i := range 2 {
		all = append(all, append(view.DenseData(tr[i].Mean), view.DenseData(te[i].Mean)...))
	}
	return v, s, all
}

func intp(i int) *int { return &i }

// TestBrushSelectsAmongAllRows: a brush's count and ids are those of a
// direct scan of every row's predicted means, for a rectangle and a
// triangle.
func TestBrushSelectsAmongAllRows(t *testing.T) {
	v, s, all := opsFixture(t)
	f := v.factsOf(s.Data)
	mean := all[0] // hidden layer 1, 3-D; the brush is in dimensions 1 and 3
	col := func(k int) []float64 {
		var c []float64
		for i := k; i < len(mean); i += 3 {
			c = append(c, mean[i])
		}
		return c
	}
	x0, x1, y0, y1 := slices.Min(col(0)), slices.Max(col(0)), slices.Min(col(2)), slices.Max(col(2))
	xm, ym := (x0+x1)/2, (y0+y1)/2
	// a triangle below the anti-diagonal, its other edges outside the data;
	// inside: on the same side of each edge as the third vertex (cross products)
	tri := []float64{x0 - 1, y0 - 1, x1 + 1, y0 - 1, x0 - 1, y1 + 1}
	cross := func(ax, ay, bx, by, px, py float64) float64 { return (bx-ax)*(py-ay) - (by-ay)*(px-ax) }
	inTri := func(x, y float64) bool {
		s1 := cross(tri[0], tri[1], tri[2], tri[3], x, y)
		s2 := cross(tri[2], tri[3], tri[4], tri[5], x, y)
		s3 := cross(tri[4], tri[5], tri[0], tri[1], x, y)
		return s1 > 0 && s2 > 0 && s3 > 0
	}
	for _, c := range []struct {
		name   string
		points []float64
		in     func(x, y float64) bool
	}{
		{"rectangle", []float64{x0, y0, xm, ym}, func(x, y float64) bool { return x >= x0 && x < xm && y >= y0 && y < ym }},
		{"triangle", tri, inTri},
	} {
		msg, err := v.brush(context.Background(), s, wire.Command{ID: 9, Op: "brush", Layer: intp(0), Dims: []int{0, 2}, Points: c.points})
		if err != nil {
			t.Fatal(err)
		}
		dec, err := wire.Decode(msg)
		if err != nil {
			t.Fatal(err)
		}
		var want, wantShown []float64
		test := 0
		for i := range len(mean) / 3 {
			if c.in(mean[3*i], mean[3*i+2]) {
				want = append(want, float64(i))
				if i >= 5000 {
					test++
				}
			}
		}
		shownRows := append(slices.Clone(f.sample.Train), make([]int, 0)...)
		for _, i := range f.sample.Test {
			shownRows = append(shownRows, 5000+i)
		}
		for k, i := range shownRows {
			if c.in(mean[3*i], mean[3*i+2]) {
				wantShown = append(wantShown, float64(k))
			}
		}
		got, _ := dec["ids"].([]float64)
		shown, _ := dec["shown"].([]float64)
		if dec["type"] != "brushed" || int(dec["count"].(float64)) != len(want) || int(dec["count_test"].(float64)) != test {
			t.Fatalf("%s: count %v (held-out %v), a direct scan finds %d (%d)", c.name, dec["count"], dec["count_test"], len(want), test)
		}
		if len(want) == 0 || test == 0 || !slices.Equal(got, want) || !slices.Equal(shown, wantShown) {
			t.Fatalf("%s: ids differ from a direct scan (%d and %d ids, %d and %d shown)", c.name, len(got), len(want), len(shown), len(wantShown))
		}
	}
}

func TestBrushErrors(t *testing.T) {
	w := []int{3, 2, 30}
	for _, c := range []struct {
		cmd  string
		want string
	}{
		{`{"op":"brush","dims":[0,1],"points":[0,0,1,1]}`, `"layer" must be a hidden layer, 0 to 1`},
		{`{"op":"brush","layer":2,"dims":[0,1],"points":[0,0,1,1]}`, "hidden layers 1 to 2"},
		{`{"op":"brush","layer":1,"dims":[0,2],"points":[0,0,1,1]}`, "asks for dimension 3"},
		{`{"op":"brush","layer":0,"dims":[0],"points":[0,0,1,1]}`, `"dims" must be two dimensions`},
		{`{"op":"brush","layer":0,"dims":[0,1],"points":[0,0,1]}`, "has 3 coordinates"},
		{`{"op":"brush","layer":0,"dims":[0,1],"points":[0,0,1,1e9]}`, "coordinate 4 is 1e+09, out of range"},
	} {
		var cmd wire.Command
		if err := json.Unmarshal([]byte(c.cmd), &cmd); err != nil {
			t.Fatal(err)
		}
		if _, err := ParseBrush(cmd, w); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.cmd, err, c.want)
		}
	}
	many := make([]float64, 2*MaxBrushVertices+2)
	if _, err := ParseBrush(wire.Command{Layer: intp(0), Dims: []int{0, 1}, Points: many}, w); err == nil {
		t.Error("a brush of more than MaxBrushVertices vertices was accepted")
	}
}

func FuzzParseBrush(f *testing.F) {
	f.Add([]byte(`{"op":"brush","layer":0,"dims":[0,1],"points":[0,0,1,1]}`))
	f.Add([]byte(`{"op":"brush","layer":1,"dims":[1,0],"points":[0,0,1,0,0,1]}`))
	f.Add([]byte(`{"op":"brush","layer":-1,"dims":[9,-3],"points":[1e308,-1e308]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c wire.Command
		if json.Unmarshal(b, &c) != nil {
			return
		}
		br, err := ParseBrush(c, []int{3, 2, 30})
		if err != nil {
			if err.Error() == "" || strings.HasPrefix(err.Error(), "explorer") {
				t.Fatalf("error %q is not for people", err)
			}
			return
		}
		if br.Layer < 0 || br.Layer > 1 || len(br.X) < 3 || len(br.X) != len(br.Y) || br.A < 0 || br.B < 0 || br.A >= 3 || br.B >= 3 {
			t.Fatalf("accepted a brush out of bounds: %+v", br)
		}
		br.Contains(0, 0)
	})
}

// TestPointsRoundTrip: a paused page fetches every row's hidden means in
// chunks: together they are every value, as float32.
func TestPointsRoundTrip(t *testing.T) {
	v, s, all := opsFixture(t)
	s.Running = true
	if _, err := v.points(context.Background(), s, wire.Command{Op: "points"}); err == nil || !strings.Contains(err.Error(), "pause") {
		t.Fatalf("a running fit's points: error %v", err)
	}
	s.Running = false
	const size = 1000
	got := make([][]float64, 2)
	for k := 0; ; k++ {
		msg, err := v.pointsChunk(s, wire.Command{Op: "points", Index: intp(k)}, size)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := wire.Decode(msg)
		if err != nil {
			t.Fatal(err)
		}
		if int(dec["rows"].(float64)) != 5500 || int(dec["chunks"].(float64)) != 6 || int(dec["from"].(float64)) != k*size {
			t.Fatalf("chunk %d: rows %v, chunks %v, from %v", k, dec["rows"], dec["chunks"], dec["from"])
		}
		for i, l := range dec["layers"].([]any) {
			got[i] = append(got[i], l.(map[string]any)["mean"].([]float64)...)
		}
		if k == 5 {
			break
		}
	}
	for i := range all {
		if len(got[i]) != len(all[i]) {
			t.Fatalf("layer %d: %d values, want %d", i+1, len(got[i]), len(all[i]))
		}
		for k, x := range all[i] {
			if got[i][k] != float64(float32(x)) && math.Abs(got[i][k]-x) > 1e-9 {
				t.Fatalf("layer %d value %d: %v, want %v", i+1, k, got[i][k], float32(x))
			}
		}
	}
	if _, err := v.pointsChunk(s, wire.Command{Op: "points", Index: intp(6)}, size); err == nil || !strings.Contains(err.Error(), "0 to 5") {
		t.Fatalf("chunk 7 of 6: error %v", err)
	}
	// a colouring's values come with the chunk: output 3 and the label column
	ds := s.Data.Set
	for _, c := range []struct {
		mode string
		want func(i int) float64
	}{
		{"ap:2", func(i int) float64 {
			if i < 5000 {
				return ds.Y.At(i, 2)
			}
			return ds.YTest.At(i-5000, 2)
		}},
		{"col:0", func(i int) float64 { return ds.Columns[0].Values[i] }},
		{"time", func(i int) float64 { return float64(i) }},
	} {
		mode := c.mode
		msg, err := v.pointsChunk(s, wire.Command{Op: "points", Index: intp(5), Colour: &mode}, size)
		if err != nil {
			t.Fatal(err)
		}
		dec, _ := wire.Decode(msg)
		col, _ := dec["colour"].([]float64)
		if len(col) != 500 {
			t.Fatalf("%s: %d values in the last chunk, want 500", mode, len(col))
		}
		for k, x := range col {
			if want := float64(float32(c.want(5000 + k))); x != want {
				t.Fatalf("%s: row %d's value %v, want %v", mode, 5000+k, x, want)
			}
		}
	}
	for _, bad := range []string{"x", "col:1", "ap:3", "ap:-1", "ap:2x", "colour"} {
		if _, err := v.pointsChunk(s, wire.Command{Op: "points", Colour: &bad}, size); err == nil || !strings.Contains(err.Error(), "no colouring") {
			t.Errorf("colouring %q: error %v", bad, err)
		}
	}
}
