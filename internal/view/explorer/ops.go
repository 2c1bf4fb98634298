package explorer

import (
	"context"
	"errors"
	"fmt"
	"math"

	"dgpviz/internal/engine"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"

	"gonum.org/v1/gonum/mat"
)

// Brushing and fetching every point answer from every row, not the
// sample: a brush counts the rows a shape holds among all of them, and a
// paused page can fetch every row's means to draw them all.
const (
	// MaxBrushVertices bounds a brush's polygon.
	MaxBrushVertices = 256
	// MaxBrushIDs is the most row ids a brush's answer lists; its count
	// is of every row selected.
	MaxBrushIDs = 10_000
	// PointsChunk is the most rows one "points" answer carries: 262,144
	// rows of two 3-D hidden layers are 6 MB of float32.
	PointsChunk = 1 << 18
)

// Figures: every view's (the latent views are the explorer's panel).
func (*View) Figures() []view.Figure { return view.CommonFigures() }

func (v *View) Ops() []view.Op {
	return []view.Op{
		{Name: "brush", Answer: v.brush},
		{Name: "points", Answer: v.points},
	}
}

// Brush is a parsed brush: a polygon in hidden layer Layer's dimensions
// A and B (all counted from 0, as the frame's layers).
type Brush struct {
	Layer, A, B int
	X, Y        []float64 // the polygon's vertices; two: a rectangle's corners
}

// ParseBrush checks a brush command against a model's layer widths
// (widths[i]: layer i's outputs): "layer" a hidden layer, "dims" two of
// its dimensions, "points" 2 to MaxBrushVertices vertices x₁, y₁, x₂, y₂, …
// Its errors count layers, dimensions and vertices from 1.
func ParseBrush(c wire.Command, widths []int) (Brush, error) {
	var b Brush
	nh := len(widths) - 1
	if nh < 1 {
		return b, errors.New("brush: the model has no hidden layer")
	}
	if c.Layer == nil || *c.Layer < 0 || *c.Layer >= nh {
		return b, fmt.Errorf("brush: \"layer\" must be a hidden layer, 0 to %d (hidden layers 1 to %d)", nh-1, nh)
	}
	b.Layer = *c.Layer
	d := widths[b.Layer]
	if len(c.Dims) != 2 {
		return b, fmt.Errorf("brush: \"dims\" must be two dimensions of hidden layer %d, each 0 to %d", b.Layer+1, d-1)
	}
	for _, k := range c.Dims {
		if k < 0 || k >= d {
			return b, fmt.Errorf("brush: hidden layer %d has dimensions 1 to %d; \"dims\" asks for dimension %d", b.Layer+1, d, k+1)
		}
	}
	b.A, b.B = c.Dims[0], c.Dims[1]
	if len(c.Points)%2 != 0 || len(c.Points) < 4 || len(c.Points) > 2*MaxBrushVertices {
		return b, fmt.Errorf("brush: \"points\" has %d coordinates, want 2 to %d vertices x₁, y₁, x₂, y₂, … (two: a rectangle's corners)", len(c.Points), MaxBrushVertices)
	}
	for k, p := range c.Points {
		if math.IsNaN(p) || math.Abs(p) > wire.MaxCoordinate {
			return b, fmt.Errorf("brush: coordinate %d is %v, out of range [-%d, %d]", k+1, p, wire.MaxCoordinate, wire.MaxCoordinate)
		}
	}
	for k := 0; k < len(c.Points); k += 2 {
		b.X, b.Y = append(b.X, c.Points[k]), append(b.Y, c.Points[k+1])
	}
	if len(b.X) == 2 {
		x0, x1, y0, y1 := b.X[0], b.X[1], b.Y[0], b.Y[1]
		b.X, b.Y = []float64{x0, x1, x1, x0}, []float64{y0, y0, y1, y1}
	}
	return b, nil
}

// Contains reports whether (x, y) is inside the brush's polygon (even-odd
// rule; a point on a rectangle's lower or left edge is inside).
func (b Brush) Contains(x, y float64) bool {
	in := false
	for i, j := 0, len(b.X)-1; i < len(b.X); j, i = i, i+1 {
		if (b.Y[i] > y) != (b.Y[j] > y) && x < (b.X[j]-b.X[i])*(y-b.Y[i])/(b.Y[j]-b.Y[i])+b.X[i] {
			in = !in
		}
	}
	return in
}

// brushedHeader is the binary "brushed" message.
type brushedHeader struct {
	V      int    `json:"v"`
	Type   string `json:"type"`
	ID     int64  `json:"id"`
	DataID int    `json:"data_id"`
	Iter   int    `json:"iter"`
	// Count is every row selected, CountTest the held-out ones among them.
	Count     int `json:"count"`
	CountTest int `json:"count_test"`
	// IDs are the first MaxBrushIDs rows selected, counted over training
	// then held-out rows (float32); Truncated says there are more.
	IDs       wire.Ref `json:"ids"`
	Truncated bool     `json:"truncated"`
	// Shown are the selected rows among those the setup carries, as
	// their places there (every one).
	Shown    wire.Ref       `json:"shown"`
	Sections []wire.Section `json:"sections"`
}

func (h *brushedHeader) SetSections(s []wire.Section) { h.Sections = s }

func (v *View) brush(_ context.Context, s *view.Snapshot, c wire.Command) ([]byte, error) {
	b, err := ParseBrush(c, widths(s.Model))
	if err != nil {
		return nil, err
	}
	f := v.factsOf(s.Data)
	means, err := v.allMeans(s, f)
	if err != nil {
		return nil, fmt.Errorf("brush: %s", err)
	}
	h := &brushedHeader{V: wire.Version, Type: "brushed", ID: c.ID, DataID: s.Data.ID, Iter: s.Iter}
	var ids []float64
	sel := func(m *mat.Dense, i int) bool { return b.Contains(m.At(i, b.A), m.At(i, b.B)) }
	for part, m := range means[b.Layer] {
		if m == nil {
			continue
		}
		r, _ := m.Dims()
		for i := range r {
			if !sel(m, i) {
				continue
			}
			h.Count++
			if part == 1 {
				h.CountTest++
				i += f.nTrain
			}
			if len(ids) < MaxBrushIDs {
				ids = append(ids, float64(i))
			}
		}
	}
	h.Truncated = h.Count > len(ids)
	var shown []float64
	for k, i := range f.sample.Train {
		if sel(means[b.Layer][0], i) {
			shown = append(shown, float64(k))
		}
	}
	if t := means[b.Layer][1]; t != nil {
		for k, i := range f.sample.Test {
			if sel(t, i) {
				shown = append(shown, float64(len(f.sample.Train)+k))
			}
		}
	}
	var e wire.Encoder
	h.IDs, h.Shown = e.F32(ids), e.F32(shown)
	return e.Finish(h)
}

// pointsHeader is the binary "points" message: one chunk of every row's
// hidden means.
type pointsHeader struct {
	V      int    `json:"v"`
	Type   string `json:"type"`
	ID     int64  `json:"id"`
	DataID int    `json:"data_id"`
	Iter   int    `json:"iter"`
	// Rows is every row (training then held-out: NTrain of them first);
	// this chunk is rows From to From+Count−1, chunk Chunk of Chunks.
	Rows   int           `json:"rows"`
	NTrain int           `json:"n_train"`
	From   int           `json:"from"`
	Count  int           `json:"count"`
	Chunk  int           `json:"chunk"`
	Chunks int           `json:"chunks"`
	Layers []pointsLayer `json:"layers"`
	// Colour is the chunk's values of the colouring asked for (original
	// units; a category's index), absent when none was.
	Colour   *wire.Ref      `json:"colour,omitempty"`
	Sections []wire.Section `json:"sections"`
}

// pointsLayer is a hidden layer's means of the chunk's rows (count × d,
// float32).
type pointsLayer struct {
	D    int      `json:"d"`
	Mean wire.Ref `json:"mean"`
}

func (h *pointsHeader) SetSections(s []wire.Section) { h.Sections = s }

// points answers chunk "index" (from 0) of every row's hidden means, to
// a paused fit only: a running one would change them between chunks.
func (v *View) points(_ context.Context, s *view.Snapshot, c wire.Command) ([]byte, error) {
	return v.pointsChunk(s, c, PointsChunk)
}

// pointsChunk answers with chunks of size rows.
func (v *View) pointsChunk(s *view.Snapshot, c wire.Command, size int) ([]byte, error) {
	if s.Running {
		return nil, errors.New("points: pause the fit first (every point is sent of one model)")
	}
	f := v.factsOf(s.Data)
	rows := f.sample.NTrain + f.sample.NTest
	chunks := max(1, (rows+size-1)/size)
	k := 0
	if c.Index != nil {
		k = *c.Index
	}
	if k < 0 || k >= chunks {
		return nil, fmt.Errorf("points: \"index\" is a chunk, 0 to %d (the data have %d rows, %d a chunk)", chunks-1, rows, size)
	}
	means, err := v.allMeans(s, f)
	if err != nil {
		return nil, fmt.Errorf("points: %s", err)
	}
	from, to := k*size, min((k+1)*size, rows)
	h := &pointsHeader{V: wire.Version, Type: "points", ID: c.ID, DataID: s.Data.ID, Iter: s.Iter,
		Rows: rows, NTrain: f.nTrain, From: from, Count: to - from, Chunk: k, Chunks: chunks, Layers: []pointsLayer{}}
	var e wire.Encoder
	if c.Colour != nil {
		col, err := colourValues(s.Data, f, *c.Colour)
		if err != nil {
			return nil, err
		}
		if len(col) != rows {
			return nil, fmt.Errorf("points: the colouring %q has %d values for %d rows", *c.Colour, len(col), rows)
		}
		r := e.F32(col[from:to])
		h.Colour = &r
	}
	for _, parts := range means {
		_, d := parts[0].Dims()
		out := make([]float64, 0, (to-from)*d)
		for i := from; i < to; i++ {
			if i < f.nTrain {
				out = append(out, parts[0].RawRowView(i)...)
			} else {
				out = append(out, parts[1].RawRowView(i-f.nTrain)...)
			}
		}
		h.Layers = append(h.Layers, pointsLayer{D: d, Mean: e.F32(out)})
	}
	return e.Finish(h)
}

// allMeans returns every hidden layer's means of every row of s's data:
// [layer][0] the training rows (the optimizer's evaluation's, or
// predicted), [layer][1] the held-out rows (predicted; nil without a
// split). The last answer is kept: the chunks of "points" and the brushes
// of one paused model predict once.
func (v *View) allMeans(s *view.Snapshot, f *facts) ([][2]*mat.Dense, error) {
	v.meansMu.Lock()
	defer v.meansMu.Unlock()
	if v.means != nil && v.meansOf == s.Model {
		return v.means, nil
	}
	m := s.Model
	nh := len(m.Layers) - 1
	ev := engine.Evaluator{Workers: 1}
	train := make([]*mat.Dense, nh)
	if s.Eval != nil && len(s.Eval.Hidden) == nh {
		for i, h := range s.Eval.Hidden {
			train[i] = h.Mean
		}
	} else {
		var err error
		if train, err = predictHidden(&ev, m, s.Data.X, nil); err != nil {
			return nil, err
		}
	}
	test := make([]*mat.Dense, nh)
	if h := f.heldOut; h != nil {
		var err error
		if test, err = predictHidden(&ev, m, h.X, nil); err != nil {
			return nil, err
		}
	}
	out := make([][2]*mat.Dense, nh)
	for i := range out {
		out[i] = [2]*mat.Dense{train[i], test[i]}
	}
	v.means, v.meansOf = out, s.Model
	return out, nil
}

// widths are the outputs of each layer of m.
func widths(m *engine.Model) []int {
	out := make([]int, len(m.Layers))
	for i, l := range m.Layers {
		_, _, out[i] = l.Dims()
	}
	return out
}

// colourValues are every row's values (training then held-out) of a
// colouring as the page names it: "time" (the first input), "x" and "y"
// (the first two ground-truth coordinates), "col:K" (extra column K, from
// 0) or "ap:J" (output J, from 0), in original units.
func colourValues(d *view.Data, f *facts, mode string) ([]float64, error) {
	ds := d.Set
	nTest := f.sample.NTest
	rows := f.nTrain + nTest
	column := func(tr, te *mat.Dense, j int) []float64 {
		out := make([]float64, 0, rows)
		for _, m := range []*mat.Dense{tr, te} {
			if m == nil {
				continue
			}
			r, _ := m.Dims()
			for i := range r {
				out = append(out, m.At(i, j))
			}
		}
		return out
	}
	var k int
	switch {
	case mode == "time":
		return column(ds.X, ds.XTest, 0), nil
	case (mode == "x" || mode == "y") && ds.Truth != nil:
		j := 0
		if mode == "y" {
			j = 1
		}
		if _, p := ds.Truth.Dims(); j < p {
			return column(ds.Truth, nil, j), nil
		}
	case scan(mode, "col:%d", &k) && k >= 0 && k < len(ds.Columns) && len(ds.Columns[k].Values) == rows:
		return ds.Columns[k].Values, nil
	case scan(mode, "ap:%d", &k) && k >= 0:
		if _, dy := ds.Y.Dims(); k < dy {
			return column(ds.Y, ds.YTest, k), nil
		}
	}
	return nil, fmt.Errorf("points: no colouring %q here (want time, x, y, col:K or ap:J of this data set)", wire.Truncate(mode, 20))
}

// scan reports whether s is format with one integer, read into k.
func scan(s, format string, k *int) bool {
	n, err := fmt.Sscanf(s, format, k)
	return err == nil && n == 1 && fmt.Sprintf(format, *k) == s
}
