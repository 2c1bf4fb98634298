package montecarlo

import (
	"dgpviz/internal/plotkit"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Sizes of the rendered figures; the message figure has the paper's
// 18 cm × 12 cm.
const (
	MessageFigureWidth  = 18 * vg.Centimeter
	MessageFigureHeight = 12 * vg.Centimeter
)

// InducingColor is the inducing variables' red.
var InducingColor = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}

// RenderMessageFigure draws the paper's message figure from data in the
// given format ("svg", "png" or "pdf") to w. Left: for each input, the
// true response density (KDE of the Monte Carlo samples, solid black) and
// the Gaussian message (in the input's colour), with the propagation and
// compression terms beneath. Top right: the layer's GP, mean ± 2 sd, with
// the inducing variables as red bars (mean ± 2 sd of q(u_m)) at the
// inducing inputs. Bottom right: the colour-coded input Gaussians.
func RenderMessageFigure(w io.Writer, format string, data *FigureData) error {
	if data == nil || len(data.Inputs) == 0 || len(data.GP.X) < 2 {
		return fmt.Errorf("RenderMessageFigure needs figure data with inputs and a GP curve")
	}
	c, err := plotkit.NewCanvas(format, MessageFigureWidth, MessageFigureHeight)
	if err != nil {
		return err
	}
	if err := DrawMessageFigure(draw.New(c), data); err != nil {
		return err
	}
	_, err = c.WriteTo(w)
	return err
}

// DrawMessageFigure draws the message figure (see RenderMessageFigure) on
// dc, a slide's body, say.
func DrawMessageFigure(dc draw.Canvas, data *FigureData) error {
	if data == nil || len(data.Inputs) == 0 || len(data.GP.X) < 2 {
		return fmt.Errorf("the message figure needs figure data with inputs and a GP curve")
	}
	half := (dc.Max.X - dc.Min.X) / 2
	left := draw.Crop(dc, 0, -half, 0, 0)
	right := draw.Crop(dc, half, 0, 0, 0)
	n := len(data.Inputs)
	tiles := draw.Tiles{Rows: n, Cols: 1, PadY: vg.Millimeter, PadTop: vg.Millimeter, PadLeft: vg.Millimeter}
	for i := range data.Inputs {
		p, err := responsePlot(&data.Inputs[i], plotkit.Color(i))
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
	return nil
}

func gaussPDF(g Gaussian) func(float64) float64 {
	sd := math.Sqrt(g.Var)
	return func(x float64) float64 { return normPDF((x-g.Mean)/sd) / sd }
}

// responsePlot draws one input's response: the KDE and the message.
func responsePlot(r *InputResponse, col color.RGBA) (*plot.Plot, error) {
	p := plot.New()
	p.X.Label.Text = fmt.Sprintf("propagation %.3g nats   compression %.3g nats   W₁ %.2g", r.Propagation, r.Compression, r.Distance.W1)
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
		return nil, fmt.Errorf("density: %w", err)
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
		return nil, fmt.Errorf("message: %w", err)
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
	if data.OutputUnit != "" {
		p.Y.Label.Text = "output (" + data.OutputUnit + ")"
		p.Y.Label.TextStyle.Font.Size = vg.Points(7)
	}
	plotkit.SetTickSizes(p)
	poly, line, err := plotkit.MeanBand(data.GP, color.Gray{Y: 0xdd})
	if err != nil {
		return nil, fmt.Errorf("GP: %w", err)
	}
	line.Width = vg.Points(1)
	p.Add(poly, line)
	for _, b := range data.Inducing {
		bar, err := plotter.NewLine(plotter.XYs{{X: b.Z, Y: b.Mean - 2*b.SD}, {X: b.Z, Y: b.Mean + 2*b.SD}})
		if err != nil {
			return nil, fmt.Errorf("inducing bar: %w", err)
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
	if data.InputUnit != "" {
		p.X.Label.Text = "input (" + data.InputUnit + ")"
	}
	p.X.Label.TextStyle.Font.Size = vg.Points(7)
	plotkit.SetTickSizes(p)
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
			return nil, fmt.Errorf("input %d: %w", i+1, err)
		}
		l.Color = plotkit.Color(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
	}
	p.X.Min, p.X.Max = lo, hi
	p.Y.Min, p.Y.Max = 0, 1.05*top
	return p, nil
}
