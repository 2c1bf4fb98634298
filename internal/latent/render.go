package latent

import (
	"dgpviz/internal/plotkit"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// FigureData is what the latent-space figure draws: every hidden layer's
// message means as pairwise projections coloured by time, and the ground
// truth's path in the same colours.
type FigureData struct {
	Times     []float64 // N, for the colours (any monotone time axis)
	TimeLabel string    // the colour bar's title, e.g. "time (s)" ("" : "time")
	// TimeRange, when not zero, is the colour scale's [lo, hi] (e.g. up to
	// the last held-out scan, as in the page); else Times' range.
	TimeRange [2]float64
	Layers    []LayerMessages // hidden layers with at least 2 dimensions
	Scores    []float64       // per layer geometry score (NaN: unknown)
	// StdErrs are the scores' standard errors when sampled (0 or absent:
	// exact).
	StdErrs []float64
	// Note, when not empty, says which rows are drawn when not all are
	// (beside the colour bar's title).
	Note string
	// Truth, when not nil, holds ground-truth coordinates (N × P, P ≥ 2):
	// the first two are drawn as the true path. TruthNames name them.
	Truth      *mat.Dense
	TruthNames []string
}

// viridis is matplotlib's perceptual colour map at 16 stops (the page's
// static/colormap.js uses the same table).
var viridis = [16][3]uint8{
	{68, 1, 84}, {72, 26, 108}, {71, 47, 125}, {65, 68, 135}, {57, 86, 140}, {49, 104, 142}, {42, 120, 142}, {35, 136, 142},
	{31, 152, 139}, {34, 168, 132}, {53, 183, 121}, {84, 197, 104}, {122, 209, 81}, {165, 219, 54}, {210, 226, 27}, {253, 231, 37},
}

// Viridis returns the colour for t in [0, 1] (clamped).
func Viridis(t float64) color.RGBA {
	if math.IsNaN(t) {
		t = 0
	}
	t = math.Max(0, math.Min(1, t)) * float64(len(viridis)-1)
	i := min(len(viridis)-2, int(t))
	f := t - float64(i)
	var c [3]uint8
	for k := range c {
		a, b := float64(viridis[i][k]), float64(viridis[i+1][k])
		c[k] = uint8(math.Round(a + f*(b-a)))
	}
	return color.RGBA{R: c[0], G: c[1], B: c[2], A: 0xff}
}

// RenderFigure writes the latent-space figure in format ("svg", "png" or
// "pdf"): one row per layer with its pairwise projections, and the ground
// truth's path beside the first row.
func RenderFigure(w io.Writer, format string, f *FigureData) error {
	if len(f.Layers) == 0 {
		return fmt.Errorf("no hidden layer with 2 or more dimensions to draw")
	}
	n := len(f.Times)
	if n == 0 {
		return fmt.Errorf("no points")
	}
	cols := 0
	for _, l := range f.Layers {
		r, q := l.Mean.Dims()
		if r != n {
			return fmt.Errorf("layer %s has %d points, times %d", l.Name, r, n)
		}
		if q < 2 {
			return fmt.Errorf("layer %s has %d dimension; projections need 2", l.Name, q)
		}
		cols = max(cols, q*(q-1)/2)
	}
	if f.Truth != nil {
		if r, c := f.Truth.Dims(); r != n || c < 2 {
			return fmt.Errorf("the ground truth is %d×%d, want %d rows and at least 2 columns", r, c, n)
		}
		cols++
	}
	colour, lo, hi := f.Colours()

	const cell = 2.6 * vg.Inch
	const barH = 0.55 * vg.Inch // the colour bar's strip at the bottom
	width, height := vg.Length(cols)*cell, vg.Length(len(f.Layers))*cell+barH
	c, err := plotkit.NewCanvas(format, width, height)
	if err != nil {
		return err
	}
	full := draw.New(c)
	dc := draw.Crop(full, 0, 0, barH, 0)
	colorBar(full, barH, lo, hi, f.TimeLabel, f.Note)
	tiles := draw.Tiles{Rows: len(f.Layers), Cols: cols, PadX: vg.Millimeter * 2, PadY: vg.Millimeter * 2,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	for li, l := range f.Layers {
		_, q := l.Mean.Dims()
		collapsed := Collapsed(l.Mean, l.Var)
		label := func(k int) string {
			if collapsed[k] {
				return fmt.Sprintf("%s dimension %d (collapsed)", l.Name, k+1)
			}
			return fmt.Sprintf("%s dimension %d", l.Name, k+1)
		}
		col := 0
		for a := 0; a < q; a++ {
			for b := a + 1; b < q; b++ {
				title := fmt.Sprintf("%s: dimensions %d, %d", l.Name, a+1, b+1)
				if a == 0 && b == 1 && li < len(f.Scores) && !math.IsNaN(f.Scores[li]) {
					if li < len(f.StdErrs) && f.StdErrs[li] > 0 {
						title += fmt.Sprintf(" (geometry %.3f ± %.3f)", f.Scores[li], f.StdErrs[li])
					} else {
						title += fmt.Sprintf(" (geometry %.3f)", f.Scores[li])
					}
				}
				p, err := scatter(title, label(a), label(b),
					func(i int) (float64, float64) { return l.Mean.At(i, a), l.Mean.At(i, b) }, n, colour, true)
				if err != nil {
					return err
				}
				for k, ax := range map[int]*plot.Axis{a: &p.X, b: &p.Y} {
					if collapsed[k] {
						ax.Min, ax.Max = priorRange(l, k)
					}
				}
				p.Draw(tiles.At(dc, col, li))
				col++
			}
		}
		if li == 0 && f.Truth != nil {
			xl, yl := "truth 1", "truth 2"
			if len(f.TruthNames) >= 2 {
				xl, yl = f.TruthNames[0], f.TruthNames[1]
			}
			p, err := scatter("ground truth (never used for fitting)", xl, yl,
				func(i int) (float64, float64) { return f.Truth.At(i, 0), f.Truth.At(i, 1) }, n, colour, false)
			if err != nil {
				return err
			}
			p.Draw(tiles.At(dc, cols-1, 0))
		}
	}
	_, err = c.WriteTo(w)
	return err
}

// colorBar draws the time colour scale across the bottom strip (height
// barH) of c, with its ends and title labelled, and note after the title.
func colorBar(c draw.Canvas, barH vg.Length, lo, hi float64, title, note string) {
	if title == "" {
		title = "time"
	}
	x0, x1 := c.Min.X+0.6*vg.Inch, c.Max.X-0.6*vg.Inch
	y0, h := c.Min.Y+barH*0.5, barH*0.22
	const steps = 96
	for k := 0; k < steps; k++ {
		a := x0 + (x1-x0)*vg.Length(k)/steps
		b := x0 + (x1-x0)*vg.Length(k+1)/steps + 0.3 // overlap: no seams
		c.FillPolygon(Viridis((float64(k)+0.5)/steps), []vg.Point{{X: a, Y: y0}, {X: b, Y: y0}, {X: b, Y: y0 + h}, {X: a, Y: y0 + h}})
	}
	sty := plot.New().X.Tick.Label
	sty.Font.Size = vg.Points(7)
	sty.YAlign = draw.YTop
	below := y0 - 2
	sty.XAlign = draw.XLeft
	c.FillText(sty, vg.Point{X: x0, Y: below}, fmt.Sprintf("%.4g", lo))
	sty.XAlign = draw.XRight
	c.FillText(sty, vg.Point{X: x1, Y: below}, fmt.Sprintf("%.4g", hi))
	sty.XAlign = draw.XCenter
	if note != "" {
		title += "; " + note
	}
	c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: below}, "colour: "+title)
}

// scatter draws n points joined in time order (a faint line, so that the
// trajectory reads) and coloured by time.
func scatter(title, xl, yl string, at func(i int) (float64, float64), n int, colour func(int) color.Color, line bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(8)
	p.X.Label.Text, p.Y.Label.Text = xl, yl
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font.Size = vg.Points(7)
		ax.Tick.Label.Font.Size = vg.Points(6)
	}
	pts := make(plotter.XYs, n)
	for i := range pts {
		pts[i].X, pts[i].Y = at(i)
	}
	if line {
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: 0xc8}
		l.Width = vg.Points(0.5)
		p.Add(l)
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	s.GlyphStyleFunc = func(i int) draw.GlyphStyle {
		return draw.GlyphStyle{Color: colour(i), Radius: vg.Points(1.6), Shape: draw.CircleGlyph{}}
	}
	p.Add(s)
	return p, nil
}

// Colours returns the colour of each row (viridis over the first input,
// f.TimeRange when set, else the range of f.Times) and the scale's ends,
// for the colour bar.
func (f *FigureData) Colours() (colour func(i int) color.Color, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, t := range f.Times {
		lo, hi = math.Min(lo, t), math.Max(hi, t)
	}
	if f.TimeRange[1] > f.TimeRange[0] {
		lo, hi = f.TimeRange[0], f.TimeRange[1]
	}
	colour = func(i int) color.Color {
		if hi == lo {
			return Viridis(0.5)
		}
		return Viridis((f.Times[i] - lo) / (hi - lo))
	}
	return colour, lo, hi
}

// priorRange is the axis of a collapsed dimension k of layer l: its
// means' centre ± 2 of its rows' standard deviations, where the points sit
// on one line, instead of the means' own range, which would stretch their
// round-off to fill the axis.
func priorRange(l LayerMessages, k int) (lo, hi float64) {
	mu, _, sd := spreadOf(l.Mean, l.Var, k)
	if sd == 0 || math.IsNaN(sd) {
		sd = 1
	}
	return mu - 2*sd, mu + 2*sd
}
