package montecarlo

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// FigureFormats are the formats RenderMessageFigure and RenderFit write.
var FigureFormats = []string{"svg", "png", "pdf"}

// Sizes of the rendered figures; the message figure has the paper's
// 18 cm × 12 cm.
const (
	MessageFigureWidth  = 18 * vg.Centimeter
	MessageFigureHeight = 12 * vg.Centimeter
	FitPanelWidth       = 16 * vg.Centimeter
	FitPanelHeight      = 5 * vg.Centimeter
)

// Colours of the figure: the inputs' colours in order (repeating), and the
// inducing variables' red.
var (
	inputColors = []color.RGBA{
		{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
		{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
		{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
		{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, // purple
		{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, // brown
		{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff}, // pink
		{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}, // grey
		{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff}, // olive
	}
	InducingColor = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
)

// SlidePixels is the least width in pixels of a PNG figure: enough for a
// slide on a 1920-pixel projector without blurring.
const SlidePixels = 1600

func newCanvas(format string, w, h vg.Length) (vg.CanvasWriterTo, error) {
	if format == "png" {
		dpi := max(96, int(math.Ceil(SlidePixels/float64(w/vg.Inch))))
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))}, nil
	}
	for _, f := range FigureFormats {
		if f == format {
			return draw.NewFormattedCanvas(w, h, format)
		}
	}
	return nil, fmt.Errorf("montecarlo: unknown figure format %q (want svg, png or pdf)", format)
}

// RenderMessageFigure draws the paper's message figure from data in the
// given format ("svg", "png" or "pdf") to w. Left: for each input, the
// true response density (KDE of the Monte Carlo samples, solid black) and
// the Gaussian message (in the input's colour), with the propagation and
// compression terms beneath. Top right: the layer's GP, mean ± 2 sd, with
// the inducing variables as red bars (mean ± 2 sd of q(u_m)) at the
// inducing inputs. Bottom right: the colour-coded input Gaussians.
func RenderMessageFigure(w io.Writer, format string, data *FigureData) error {
	if data == nil || len(data.Inputs) == 0 || len(data.GP.X) < 2 {
		return fmt.Errorf("montecarlo: RenderMessageFigure needs figure data with inputs and a GP curve")
	}
	c, err := newCanvas(format, MessageFigureWidth, MessageFigureHeight)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	half := (dc.Max.X - dc.Min.X) / 2
	left := draw.Crop(dc, 0, -half, 0, 0)
	right := draw.Crop(dc, half, 0, 0, 0)
	n := len(data.Inputs)
	tiles := draw.Tiles{Rows: n, Cols: 1, PadY: vg.Millimeter, PadTop: vg.Millimeter, PadLeft: vg.Millimeter}
	for i := range data.Inputs {
		p, err := responsePlot(&data.Inputs[i], inputColor(i))
		if err != nil {
			return err
		}
		p.Draw(tiles.At(left, 0, i))
	}

	vh := (dc.Max.Y - dc.Min.Y) / 2
	gp, err := gpPlot(data)
	if err != nil {
		return err
	}
	gp.Draw(draw.Crop(right, 0, 0, vh, 0))
	ins, err := inputsPlot(data, gp.X.Min, gp.X.Max)
	if err != nil {
		return err
	}
	ins.Draw(draw.Crop(right, 0, 0, 0, -vh))
	_, err = c.WriteTo(w)
	return err
}

func inputColor(i int) color.RGBA { return inputColors[i%len(inputColors)] }

// InputColorsHex returns the inputs' colours in order as "#rrggbb", for the
// page, which draws the live figure in the same colours.
func InputColorsHex() []string {
	out := make([]string, len(inputColors))
	for i, c := range inputColors {
		out[i] = fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)
	}
	return out
}

func gaussPDF(g Gaussian) func(float64) float64 {
	sd := math.Sqrt(g.Var)
	return func(x float64) float64 { return normPDF((x-g.Mean)/sd) / sd }
}

// responsePlot draws one input's response: the KDE and the message.
func responsePlot(r *InputResponse, col color.RGBA) (*plot.Plot, error) {
	p := plot.New()
	p.X.Label.Text = fmt.Sprintf("propagation %.3g   compression %.3g   W₁ %.2g", r.Propagation, r.Compression, r.Distance.W1)
	p.X.Label.TextStyle.Font.Size = vg.Points(7)
	p.X.Tick.Label.Font.Size = vg.Points(6)
	p.Y.Tick.Label.Font.Size = vg.Points(6)
	p.X.Label.Padding = vg.Points(1)
	xy := make(plotter.XYs, len(r.Density.X))
	top := 0.0
	for i := range xy {
		xy[i].X, xy[i].Y = r.Density.X[i], r.Density.P[i]
		top = math.Max(top, xy[i].Y)
	}
	mc, err := plotter.NewLine(xy)
	if err != nil {
		return nil, fmt.Errorf("montecarlo: density: %w", err)
	}
	mc.Color = color.Black
	mc.Width = vg.Points(1)
	// The message on the same grid, extended to ±3 sd of the message.
	lo, hi := r.Density.X[0], r.Density.X[len(r.Density.X)-1]
	sd := math.Sqrt(r.Message.Var)
	lo, hi = math.Min(lo, r.Message.Mean-3*sd), math.Max(hi, r.Message.Mean+3*sd)
	f := gaussPDF(r.Message)
	const pts = 200
	gx := make(plotter.XYs, pts)
	for i := range gx {
		x := lo + (hi-lo)*float64(i)/(pts-1)
		gx[i].X, gx[i].Y = x, f(x)
		top = math.Max(top, gx[i].Y)
	}
	msg, err := plotter.NewLine(gx)
	if err != nil {
		return nil, fmt.Errorf("montecarlo: message: %w", err)
	}
	msg.Color = col
	msg.Width = vg.Points(1.5)
	p.Add(msg, mc)
	p.X.Min, p.X.Max = lo, hi
	p.Y.Min, p.Y.Max = 0, 1.05*top
	return p, nil
}

// gpPlot draws the GP with its inducing variables.
func gpPlot(data *FigureData) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("layer %d", data.Layer+1)
	p.Title.TextStyle.Font.Size = vg.Points(8)
	setTickSizes(p)
	poly, line, err := meanBand(data.GP, color.Gray{Y: 0xdd})
	if err != nil {
		return nil, fmt.Errorf("montecarlo: GP: %w", err)
	}
	line.Width = vg.Points(1)
	p.Add(poly, line)
	for _, b := range data.Inducing {
		bar, err := plotter.NewLine(plotter.XYs{{X: b.Z, Y: b.Mean - 2*b.SD}, {X: b.Z, Y: b.Mean + 2*b.SD}})
		if err != nil {
			return nil, fmt.Errorf("montecarlo: inducing bar: %w", err)
		}
		bar.Color = InducingColor
		bar.Width = vg.Points(1.5)
		p.Add(bar)
	}
	p.X.Min, p.X.Max = data.GP.X[0], data.GP.X[len(data.GP.X)-1]
	return p, nil
}

// inputsPlot draws the input Gaussians on [lo, hi].
func inputsPlot(data *FigureData, lo, hi float64) (*plot.Plot, error) {
	p := plot.New()
	p.X.Label.Text = "input"
	p.X.Label.TextStyle.Font.Size = vg.Points(7)
	setTickSizes(p)
	const pts = 300
	top := 0.0
	for i, r := range data.Inputs {
		f := gaussPDF(Gaussian(r.Input))
		xy := make(plotter.XYs, pts)
		for k := range xy {
			x := lo + (hi-lo)*float64(k)/(pts-1)
			xy[k] = plotter.XY{X: x, Y: f(x)}
			top = math.Max(top, xy[k].Y)
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("montecarlo: input %d: %w", i, err)
		}
		l.Color = inputColor(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
	}
	p.X.Min, p.X.Max = lo, hi
	p.Y.Min, p.Y.Max = 0, 1.05*top
	return p, nil
}

func setTickSizes(p *plot.Plot) {
	p.X.Tick.Label.Font.Size = vg.Points(6)
	p.Y.Tick.Label.Font.Size = vg.Points(6)
}

// RenderFit draws one fit panel per FitData, stacked top to bottom (the
// step-function figure for 1, 2 and 3 layers), in the given format to w:
// the data as dots and the predictive mean ± 2 sd.
func RenderFit(w io.Writer, format string, fits []*FitData) error {
	if len(fits) == 0 {
		return fmt.Errorf("montecarlo: RenderFit needs at least one fit")
	}
	for i, f := range fits {
		if f == nil || len(f.Grid.X) < 2 {
			return fmt.Errorf("montecarlo: fit %d has no prediction grid", i)
		}
	}
	c, err := newCanvas(format, FitPanelWidth, FitPanelHeight*vg.Length(len(fits)))
	if err != nil {
		return err
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: len(fits), Cols: 1, PadY: vg.Millimeter, PadTop: vg.Millimeter}
	for i, f := range fits {
		p, err := fitPlot(f)
		if err != nil {
			return err
		}
		p.Draw(tiles.At(dc, 0, i))
	}
	_, err = c.WriteTo(w)
	return err
}

func fitPlot(f *FitData) (*plot.Plot, error) {
	p := plot.New()
	layers := "1 layer"
	if f.Layers > 1 {
		layers = fmt.Sprintf("%d layers", f.Layers)
	}
	p.Title.Text = fmt.Sprintf("%s — bound %.2f nats", layers, f.Bound)
	p.Title.TextStyle.Font.Size = vg.Points(8)
	p.X.Label.Text = "x"
	p.Y.Label.Text = "y (mean ± 2 sd)"
	p.X.Label.TextStyle.Font.Size = vg.Points(7)
	p.Y.Label.TextStyle.Font.Size = vg.Points(7)
	setTickSizes(p)
	poly, line, err := meanBand(f.Grid, color.RGBA{R: 0xc6, G: 0xdb, B: 0xef, A: 0xff})
	if err != nil {
		return nil, fmt.Errorf("montecarlo: fit: %w", err)
	}
	line.Color = inputColor(0)
	line.Width = vg.Points(1.5)
	pts := make(plotter.XYs, len(f.X))
	for i := range pts {
		pts[i] = plotter.XY{X: f.X[i], Y: f.Y[i]}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, fmt.Errorf("montecarlo: fit data: %w", err)
	}
	sc.GlyphStyle.Radius = vg.Points(1.2)
	sc.GlyphStyle.Color = color.Black
	p.Add(poly, line, sc)
	return p, nil
}

// meanBand returns a curve's ±2 sd band, filled in fill, and its mean line.
func meanBand(g GPCurve, fill color.Color) (*plotter.Polygon, *plotter.Line, error) {
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
