// Package slides draws the live page's panels as figures for slides:
// 16:9, with a title, axis labels, a legend and a caption line saying
// where the figure comes from (the data, the iteration, the bound), as
// SVG, PNG or PDF (plotkit's formats). The page's "Download" menus get
// them from web/figure.go, each from one snapshot of the session's model.
//
// The figures use the page's colours, one hue per meaning: blue the
// Gaussian messages and functions, red the inducing variables, black and
// grey what sampling finds and the data, sky KL, amber compression,
// violet propagation, green the likelihood.
package slides

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"dgpviz/internal/plotkit"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Size of every slide figure: 16:9, 6.4 × 3.6 inches (a PNG at 250 dpi
// is plotkit.SlidePixels × 900 pixels).
const (
	Width  = 6.4 * vg.Inch
	Height = 3.6 * vg.Inch
)

// The page's colours (static/plot.js).
var (
	Mean        = color.RGBA{R: 0x1d, G: 0x4e, B: 0xd8, A: 0xff}
	Band        = color.RGBA{R: 0xc3, G: 0xd3, B: 0xf8, A: 0xff} // rgba(37, 99, 235, 0.22) on white
	BandWide    = color.RGBA{R: 0xe6, G: 0xed, B: 0xfd, A: 0xff} // rgba(37, 99, 235, 0.09) on white
	Inducing    = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	Data        = color.RGBA{R: 0x11, G: 0x18, B: 0x27, A: 0xff}
	KL          = color.RGBA{R: 0x0e, G: 0xa5, B: 0xe9, A: 0xff}
	Compression = color.RGBA{R: 0xf5, G: 0x9e, B: 0x0b, A: 0xff}
	Propagation = color.RGBA{R: 0x8b, G: 0x5c, B: 0xf6, A: 0xff}
	Likelihood  = color.RGBA{R: 0x04, G: 0x78, B: 0x57, A: 0xff}
	Muted       = color.RGBA{R: 0x6b, G: 0x77, B: 0x85, A: 0xff}
)

// Caption is a slide's last line: where the figure comes from.
type Caption struct {
	Dataset string  // the data set's name
	Iter    int     // the optimizer's iteration
	Bound   float64 // nats; NaN: none
	Note    string  // more, e.g. "20,000 samples per input"
}

// String is the caption line: "dgpviz · step · iteration 937 · bound
// −0.755 nats · …".
func (c Caption) String() string {
	parts := []string{"dgpviz"}
	if c.Dataset != "" {
		parts = append(parts, c.Dataset)
	}
	parts = append(parts, fmt.Sprintf("iteration %d", c.Iter))
	if !math.IsNaN(c.Bound) && !math.IsInf(c.Bound, 0) {
		parts = append(parts, "bound "+minus(fmt.Sprintf("%.4g", c.Bound))+" nats")
	}
	if c.Note != "" {
		parts = append(parts, c.Note)
	}
	return strings.Join(parts, " · ")
}

// wrap breaks s into lines of at most width in sty, between words, so that
// a long title, key or caption stays on the slide.
func wrap(sty text.Style, s string, width vg.Length) string {
	var lines []string
	var cur string
	for _, w := range strings.Fields(s) {
		if cur != "" && sty.Width(cur+" "+w) > width {
			lines = append(lines, cur)
			cur = w
			continue
		}
		cur = strings.TrimPrefix(cur+" "+w, " ")
	}
	return strings.Join(append(lines, cur), "\n")
}

// minus writes a true minus sign.
func minus(s string) string { return strings.ReplaceAll(s, "-", "−") }

// Render writes a slide in format ("svg", "png" or "pdf") to w: the title
// at the top, body's drawing, a key line (what the marks mean, for a body
// without a legend of its own; "" for none) and the caption at the bottom.
func Render(w io.Writer, format, title, key string, cap Caption, body func(dc draw.Canvas) error) error {
	c, err := plotkit.NewCanvas(format, Width, Height)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	dc.FillPolygon(color.White, []vg.Point{dc.Min, {X: dc.Max.X, Y: dc.Min.Y}, dc.Max, {X: dc.Min.X, Y: dc.Max.Y}})
	sty := plot.New().Title.TextStyle
	sty.Font.Size = vg.Points(10)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
	pad := 2.5 * vg.Millimeter
	line := Width - 2*pad
	title = wrap(sty, title, line)
	dc.FillText(sty, vg.Point{X: dc.Min.X + pad, Y: dc.Max.Y - pad}, title)
	small := plot.New().X.Tick.Label
	small.Font.Size = vg.Points(6.5)
	small.XAlign, small.YAlign = draw.XLeft, draw.YBottom
	small.Color = Muted
	caption := wrap(small, cap.String(), line)
	dc.FillText(small, vg.Point{X: dc.Min.X + pad, Y: dc.Min.Y + pad}, caption)
	bottom := pad + small.Height(caption) + vg.Millimeter
	if key != "" {
		k := small
		k.Color = Data
		key = wrap(k, key, line)
		dc.FillText(k, vg.Point{X: dc.Min.X + pad, Y: dc.Min.Y + bottom}, key)
		bottom += k.Height(key) + vg.Millimeter
	}
	top := pad + sty.Height(title) + vg.Millimeter
	if err := body(draw.Crop(dc, pad, -pad, bottom, -top)); err != nil {
		return err
	}
	_, err = c.WriteTo(w)
	return err
}

// newPlot returns a plot styled for a slide: labelled axes, small ticks,
// a legend at the top left.
func newPlot(xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	p.X.Label.TextStyle.Font.Size = vg.Points(8)
	p.Y.Label.TextStyle.Font.Size = vg.Points(8)
	p.X.Tick.Label.Font.Size = vg.Points(7)
	p.Y.Tick.Label.Font.Size = vg.Points(7)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(7)
	p.Legend.ThumbnailWidth = 4 * vg.Millimeter
	p.Legend.Padding = 0.5 * vg.Millimeter
	p.Title.TextStyle.Font.Size = vg.Points(8)
	return p
}

// band returns the polygon between lo and hi over xs, filled with fill.
func band(xs, lo, hi []float64, fill color.Color) (*plotter.Polygon, error) {
	pts := make(plotter.XYs, 0, 2*len(xs))
	for i := range xs {
		pts = append(pts, plotter.XY{X: xs[i], Y: hi[i]})
	}
	for i := len(xs) - 1; i >= 0; i-- {
		pts = append(pts, plotter.XY{X: xs[i], Y: lo[i]})
	}
	poly, err := plotter.NewPolygon(pts)
	if err != nil {
		return nil, fmt.Errorf("band: %w", err)
	}
	poly.Color = fill
	poly.LineStyle.Width = 0
	return poly, nil
}

// line returns the line through (xs, ys), coloured c, w points wide.
func line(xs, ys []float64, c color.Color, w float64, dashes ...vg.Length) (*plotter.Line, error) {
	pts := make(plotter.XYs, len(xs))
	for i := range xs {
		pts[i] = plotter.XY{X: xs[i], Y: ys[i]}
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, fmt.Errorf("line: %w", err)
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(w), dashes
	return l, nil
}

// dots returns the points (xs, ys) as filled circles of radius r points.
func dots(xs, ys []float64, c color.Color, r float64) (*plotter.Scatter, error) {
	pts := make(plotter.XYs, len(xs))
	for i := range xs {
		pts[i] = plotter.XY{X: xs[i], Y: ys[i]}
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, fmt.Errorf("points: %w", err)
	}
	s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(r), Shape: draw.CircleGlyph{}}
	return s, nil
}

// swatch is a legend entry's filled box.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.c, []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
}

// withAlpha blends c with white at opacity a (a swatch of a band).
func withAlpha(c color.RGBA, a float64) color.RGBA {
	m := func(v uint8) uint8 { return uint8(math.Round(float64(v)*a + 255*(1-a))) }
	return color.RGBA{R: m(c.R), G: m(c.G), B: m(c.B), A: 0xff}
}
