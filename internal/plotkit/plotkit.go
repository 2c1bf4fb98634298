// Package plotkit holds what dgpviz's gonum/plot figures share: the output
// formats and their canvases (PNG at slide resolution, PDF in Unicode
// fonts, SVG with a generic font family to fall back on), a curve with its
// ±2 sd band, the padded range of an axis, tick sizes, and the categorical
// colours the page uses too. The figures themselves live with what they
// show: the message figure in montecarlo, the fit figure in fitfigure, the
// latent-space figure in latent.
package plotkit

import (
	"fmt"
	"image/color"
	"image/png"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Formats are the formats every figure writes.
var Formats = []string{"svg", "png", "pdf"}

// SlidePixels is the least width in pixels of a PNG figure: enough for a
// slide on a 1920-pixel projector without blurring.
const SlidePixels = 1600

// NewCanvas returns a w × h canvas writing format ("svg", "png" or "pdf");
// a PNG gets at least SlidePixels pixels across (and at least 96 dpi).
func NewCanvas(format string, w, h vg.Length) (vg.CanvasWriterTo, error) {
	switch format {
	case "png":
		dpi := max(96, int(math.Ceil(SlidePixels/float64(w/vg.Inch))))
		return PNGCanvas(w, h, dpi), nil
	case "pdf":
		return newPDFCanvas(w, h), nil
	case "svg":
		return svgCanvas{vgsvg.New(w, h)}, nil
	}
	return nil, fmt.Errorf("unknown figure format %q (want svg, png or pdf)", format)
}

// PNGCanvas is a w × h PNG canvas at dpi, for figures that need more pixels
// than NewCanvas gives (the faces figure's tiles).
func PNGCanvas(w, h vg.Length, dpi int) vg.CanvasWriterTo {
	return pngCanvas{vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))}
}

// pngCanvas writes its image with png.BestSpeed: a figure's flat colours
// compress almost as well as at the default level, in a fraction of the
// time (BenchmarkPNG: the message figure at slide resolution).
type pngCanvas struct{ *vgimg.Canvas }

func (c pngCanvas) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	err := enc.Encode(cw, c.Image())
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Palette is the categorical colours, in order (the page draws the message
// figure's inputs in the same colours: PaletteHex).
var Palette = []color.RGBA{
	{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
	{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
	{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
	{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, // purple
	{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, // brown
	{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff}, // pink
	{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}, // grey
	{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff}, // olive
}

// Color returns the i-th categorical colour, repeating after the last.
func Color(i int) color.RGBA { return Palette[i%len(Palette)] }

// PaletteHex returns Palette as "#rrggbb" strings.
func PaletteHex() []string {
	out := make([]string, len(Palette))
	for i, c := range Palette {
		out[i] = fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)
	}
	return out
}

// Curve is a 1-D function's mean and standard deviation on a grid.
type Curve struct {
	X    []float64 `json:"x"`
	Mean []float64 `json:"mean"`
	SD   []float64 `json:"sd"`
}

// MeanBand returns a curve's ±2 sd band, filled in fill, and its mean line.
func MeanBand(g Curve, fill color.Color) (*plotter.Polygon, *plotter.Line, error) {
	band := make(plotter.XYs, 0, 2*len(g.X))
	mean := make(plotter.XYs, len(g.X))
	for i := range g.X {
		band = append(band, plotter.XY{X: g.X[i], Y: g.Mean[i] + 2*g.SD[i]})
		mean[i] = plotter.XY{X: g.X[i], Y: g.Mean[i]}
	}
	for i := len(g.X) - 1; i >= 0; i-- {
		band = append(band, plotter.XY{X: g.X[i], Y: g.Mean[i] - 2*g.SD[i]})
	}
	poly, err := plotter.NewPolygon(band)
	if err != nil {
		return nil, nil, fmt.Errorf("band: %w", err)
	}
	poly.Color = fill
	poly.LineStyle.Width = 0
	line, err := plotter.NewLine(mean)
	if err != nil {
		return nil, nil, fmt.Errorf("mean: %w", err)
	}
	return poly, line, nil
}

// Pad returns [lo, hi] widened by 5 % on each side, or by half its
// magnitude (at least ½) when it is empty.
func Pad(lo, hi float64) [2]float64 {
	w := hi - lo
	if !(w > 0) {
		w = math.Max(1, math.Abs(lo))
		return [2]float64{lo - w/2, hi + w/2}
	}
	return [2]float64{lo - 0.05*w, hi + 0.05*w}
}

// SetTickSizes sets both axes' tick labels to 6 pt.
func SetTickSizes(p *plot.Plot) {
	p.X.Tick.Label.Font.Size = vg.Points(6)
	p.Y.Tick.Label.Font.Size = vg.Points(6)
}
