package slides

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"dgpviz/internal/faces"
	"dgpviz/internal/fitfigure"
	"dgpviz/internal/latent"
	"dgpviz/internal/montecarlo"
	"dgpviz/internal/train"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Fit writes the fit panel: the data and the final message's mean ± 2 sd,
// in the data's original units.
func Fit(w io.Writer, format string, f *fitfigure.FitData, xlabel, ylabel string, cap Caption) error {
	if f == nil || len(f.Grid.X) < 2 {
		return fmt.Errorf("the fit has no prediction grid")
	}
	layers := "1 layer"
	if f.Layers > 1 {
		layers = fmt.Sprintf("%d layers", f.Layers)
	}
	return Render(w, format, fmt.Sprintf("Fit of the whole deep GP (%s)", layers), "", cap, func(dc draw.Canvas) error {
		p := newPlot(xlabel, ylabel)
		lo, hi := make([]float64, len(f.Grid.X)), make([]float64, len(f.Grid.X))
		for i := range lo {
			lo[i], hi[i] = f.Grid.Mean[i]-2*f.Grid.SD[i], f.Grid.Mean[i]+2*f.Grid.SD[i]
		}
		b, err := band(f.Grid.X, lo, hi, Band)
		if err != nil {
			return err
		}
		m, err := line(f.Grid.X, f.Grid.Mean, Mean, 1.6)
		if err != nil {
			return err
		}
		d, err := dots(f.X, f.Y, Data, 1.6)
		if err != nil {
			return err
		}
		p.Add(b, m, d)
		p.Legend.Add("data", d)
		p.Legend.Add("final message mean", m)
		p.Legend.Add("± 2 sd of the final message", swatch{Band})
		p.Draw(dc)
		return nil
	})
}

// LayerData is a layer panel: the layer's function of a certain input
// (mean, ± 2 sd of f and with the noise), its inducing points (u: mean ±
// 2 sd at z), the messages into and out of it at the data, the data (the
// last layer) and each datum's penalties, in the units the page shows
// (the data's original units for the first layer's input and the last
// layer's output, else the hidden layers' own).
type LayerData struct {
	Index, Layers                            int // the layer (from 0) and how many there are
	XLabel, YLabel                           string
	GridX                                    []float64
	Mean, SDF, SDY                           []float64 // f's mean, its sd, and its sd with the noise
	Z, U, USD                                []float64
	InMean, InSD                             []float64 // the messages into the layer (sd 0 for the data)
	OutMean, OutSD                           []float64 // the messages out of it
	Y                                        []float64 // the data's outputs (the last layer), else nil
	CompressionPerDatum, PropagationPerDatum []float64 // each datum's penalties (nats), nil when unknown
}

// RenderLayer writes a layer panel: the function with its bands, the
// inducing points, the messages out of the layer (dots with ± 2 sd), the
// data on the last layer, and beneath, each datum's compression and
// propagation at its input.
func RenderLayer(w io.Writer, format string, ld *LayerData, cap Caption) error {
	title := fmt.Sprintf("Layer %d of %d: its function, inducing points and messages", ld.Index+1, ld.Layers)
	return Render(w, format, title, "", cap, func(dc draw.Canvas) error {
		p := newPlot("", ld.YLabel)
		n := len(ld.GridX)
		lo, hi, lo2, hi2 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range ld.GridX {
			lo[i], hi[i] = ld.Mean[i]-2*ld.SDF[i], ld.Mean[i]+2*ld.SDF[i]
			lo2[i], hi2[i] = ld.Mean[i]-2*ld.SDY[i], ld.Mean[i]+2*ld.SDY[i]
		}
		wide, err := band(ld.GridX, lo2, hi2, BandWide)
		if err != nil {
			return err
		}
		narrow, err := band(ld.GridX, lo, hi, Band)
		if err != nil {
			return err
		}
		mean, err := line(ld.GridX, ld.Mean, Mean, 1.6)
		if err != nil {
			return err
		}
		p.Add(wide, narrow, mean)
		// the messages out: dots with ± 2 sd
		outs, err := dots(ld.InMean, ld.OutMean, withAlpha(color.RGBA{R: 0x21, G: 0x91, B: 0x8c, A: 0xff}, 0.9), 1.3)
		if err != nil {
			return err
		}
		for i := range ld.InMean {
			wl, err := line([]float64{ld.InMean[i], ld.InMean[i]}, []float64{ld.OutMean[i] - 2*ld.OutSD[i], ld.OutMean[i] + 2*ld.OutSD[i]}, withAlpha(color.RGBA{R: 0x21, G: 0x91, B: 0x8c, A: 0xff}, 0.35), 0.8)
			if err != nil {
				return err
			}
			p.Add(wl)
		}
		p.Add(outs)
		if ld.Y != nil {
			d, err := dots(ld.InMean, ld.Y, Data, 1.4)
			if err != nil {
				return err
			}
			d.GlyphStyle.Shape = draw.RingGlyph{}
			p.Add(d)
			p.Legend.Add("data", d)
		}
		// inducing points: red diamonds with ± 2 sd whiskers
		for k := range ld.Z {
			wl, err := line([]float64{ld.Z[k], ld.Z[k]}, []float64{ld.U[k] - 2*ld.USD[k], ld.U[k] + 2*ld.USD[k]}, Inducing, 1)
			if err != nil {
				return err
			}
			p.Add(wl)
		}
		u, err := dots(ld.Z, ld.U, Inducing, 2.4)
		if err != nil {
			return err
		}
		u.GlyphStyle.Shape = draw.PyramidGlyph{}
		p.Add(u)
		p.Legend.Add("f mean", mean)
		p.Legend.Add("± 2 sd of f", swatch{Band})
		p.Legend.Add("± 2 sd with the noise", swatch{BandWide})
		p.Legend.Add("inducing points u (± 2 sd)", u)
		p.Legend.Add("messages out (± 2 sd)", outs)
		if ld.CompressionPerDatum == nil {
			p.X.Label.Text = ld.XLabel
			p.Draw(dc)
			return nil
		}
		// the penalties beneath, on the same input axis
		h := dc.Max.Y - dc.Min.Y
		top := draw.Crop(dc, 0, 0, h*0.32, 0)
		bottom := draw.Crop(dc, 0, 0, 0, -h*0.7)
		pen := newPlot(ld.XLabel, "penalty (nats)")
		for i := range ld.InMean {
			c, pr := ld.CompressionPerDatum[i], ld.PropagationPerDatum[i]
			cb, err := line([]float64{ld.InMean[i], ld.InMean[i]}, []float64{0, c}, Compression, 2.4)
			if err != nil {
				return err
			}
			pb, err := line([]float64{ld.InMean[i], ld.InMean[i]}, []float64{c, c + pr}, Propagation, 2.4)
			if err != nil {
				return err
			}
			pen.Add(cb, pb)
		}
		p.Legend.Add("compression, beneath", swatch{Compression})
		p.Legend.Add("propagation, beneath", swatch{Propagation})
		top2 := 0.0
		for i := range ld.CompressionPerDatum {
			top2 = math.Max(top2, ld.CompressionPerDatum[i]+ld.PropagationPerDatum[i])
		}
		pen.Y.Min, pen.Y.Max = 0, math.Max(top2, 1e-9)*1.05
		pen.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: top2, Label: fmt.Sprintf("%.3g", top2)}})
		// one input axis for both: the wider of the two ranges, and the
		// data areas lined up
		xmin, xmax := math.Min(p.X.Min, pen.X.Min), math.Max(p.X.Max, pen.X.Max)
		p.X.Min, p.X.Max, pen.X.Min, pen.X.Max = xmin, xmax, xmin, xmax
		a, b := p.DataCanvas(top), pen.DataCanvas(bottom)
		if d := a.Min.X - b.Min.X; d > 0 {
			bottom = draw.Crop(bottom, d, 0, 0, 0)
		} else {
			top = draw.Crop(top, -d, 0, 0, 0)
		}
		if d := a.Max.X - b.Max.X; d < 0 {
			bottom = draw.Crop(bottom, 0, d, 0, 0)
		} else {
			top = draw.Crop(top, 0, -d, 0, 0)
		}
		p.Draw(top)
		pen.Draw(bottom)
		return nil
	})
}

// Bound writes the bound panel: the likelihood and the bound over
// iterations, and between them what each layer pays, stacked.
func Bound(w io.Writer, format string, h *train.History, cap Caption) error {
	n := len(h.Iter)
	if n < 2 {
		return fmt.Errorf("the bound has %d points; a chart needs 2", n)
	}
	lo, hi, low := BoundAxis(h.Bound, h.Likelihood)
	sub := ""
	if low < lo {
		sub = fmt.Sprintf("the bound's lowest, %s nats, is below the chart, which keeps the latest bound readable", formatNats(low))
	}
	return Render(w, format, "The bound over iterations: what each layer pays", sub, cap, func(dc draw.Canvas) error {
		p := newPlot("iteration", "nats")
		p.Y.Min, p.Y.Max = lo, hi
		p.Legend.Top, p.Legend.Left = false, false
		shades := []float64{1, 0.72, 0.5, 0.36, 0.26, 0.2}
		top := make([]float64, n)
		for k := range top {
			top[k] = orZero(h.Likelihood[k], h.Bound[k])
		}
		colours := []color.RGBA{KL, Compression, Propagation}
		terms := [][]float64{h.KL, h.Compression, h.Propagation}
		for l := 0; l < h.Layers; l++ {
			for t := 0; t < 3; t++ {
				bot := make([]float64, n)
				for k := range bot {
					v := terms[t][k*h.Layers+l]
					if math.IsNaN(v) {
						v = 0
					}
					bot[k] = top[k] - v
				}
				b, err := band(h.Iter, bot, top, withAlpha(colours[t], 0.75*shades[min(l, len(shades)-1)]))
				if err != nil {
					return err
				}
				p.Add(b)
				top = bot
			}
		}
		lik, err := line(h.Iter, h.Likelihood, Likelihood, 1.2, vg.Points(4), vg.Points(2))
		if err != nil {
			return err
		}
		bound, err := line(h.Iter, h.Bound, Data, 2)
		if err != nil {
			return err
		}
		p.Add(lik, bound)
		p.Legend.Add("bound", bound)
		p.Legend.Add("likelihood", lik)
		p.Legend.Add("KL", swatch{withAlpha(KL, 0.75)})
		p.Legend.Add("compression", swatch{withAlpha(Compression, 0.75)})
		p.Legend.Add("propagation", swatch{withAlpha(Propagation, 0.75)})
		p.Legend.Add("paler: deeper layers", swatch{withAlpha(Muted, 0.3)})
		p.Draw(dc)
		return nil
	})
}

// BoundAxis is the bound chart's vertical range [lo, hi] over the whole
// history, and the lowest bound, below lo when a moment (an edit that
// cost thousands of nats) is left off the chart. The latest quarter of
// the points (at least 10) stays readable: lo is at most the range of
// their bounds and likelihoods below their lowest bound, so that the
// recovered bound is not flattened into a line under the spike. The page's
// bound panel keeps the same quarter readable (static/panels/bound.js).
func BoundAxis(bound, lik []float64) (lo, hi, lowest float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for k, b := range bound {
		if math.IsNaN(b) {
			continue
		}
		lo, hi = math.Min(lo, b), math.Max(hi, b)
		if !math.IsNaN(lik[k]) {
			hi = math.Max(hi, lik[k])
		}
	}
	lowest = lo
	tLo, tHi := math.Inf(1), math.Inf(-1)
	for k := max(0, len(bound)-max(10, (len(bound)+3)/4)); k < len(bound); k++ {
		if math.IsNaN(bound[k]) {
			continue
		}
		tLo, tHi = math.Min(tLo, bound[k]), math.Max(tHi, bound[k])
		if !math.IsNaN(lik[k]) {
			tHi = math.Max(tHi, lik[k])
		}
	}
	if !math.IsInf(tLo, 1) {
		lo = math.Max(lo, tLo-math.Max(tHi-tLo, 1e-6))
	}
	pad := 0.06 * math.Max(hi-lo, 1e-6)
	return lo - pad, hi + pad, lowest
}

// formatNats writes a bound with a true minus sign.
func formatNats(v float64) string {
	return strings.Replace(strconv.FormatFloat(v, 'f', 1, 64), "-", "−", 1)
}

func orZero(v, alt float64) float64 {
	if math.IsNaN(v) {
		return alt
	}
	return v
}

// Depth is one model of the depth comparison: its layers, bound, rise
// width and the predictive mean and sd on the comparison's grid (original
// units); Mean nil when it failed.
type Depth struct {
	Layers    int
	Bound     float64
	Rise      float64 // NaN: none
	Mean, SD  []float64
	Status    string
	Restarts  int
	KeptBound float64
}

// RenderDepth writes the depth comparison: the data fitted with 1, 2 and
// 3 layers side by side on shared axes.
func RenderDepth(w io.Writer, format string, x []float64, depths []Depth, dataX, dataY []float64, xlabel, ylabel string, cap Caption) error {
	if len(depths) == 0 || len(x) < 2 {
		return fmt.Errorf("the depth comparison has no models")
	}
	return Render(w, format, "Depth: the same data fitted with 1, 2 and 3 layers", "the best of each depth's restarts by the bound; rise: the 10–90 % rise width of the mean (input units)", cap, func(dc draw.Canvas) error {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, y := range dataY {
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
		for _, d := range depths {
			for i := range d.Mean {
				lo, hi = math.Min(lo, d.Mean[i]-2*d.SD[i]), math.Max(hi, d.Mean[i]+2*d.SD[i])
			}
		}
		tiles := draw.Tiles{Rows: 1, Cols: len(depths), PadX: 3 * vg.Millimeter}
		for k, d := range depths {
			yl := ""
			if k == 0 {
				yl = ylabel
			}
			p := newPlot(xlabel, yl)
			p.Title.Text = fmt.Sprintf("%d layer%s · bound %s", d.Layers, map[bool]string{true: "s", false: ""}[d.Layers > 1], minus(fmt.Sprintf("%.4g", d.Bound)))
			if !math.IsNaN(d.Rise) {
				p.Title.Text += " · rise " + fmt.Sprintf("%.3g", d.Rise)
			}
			pts, err := dots(dataX, dataY, Data, 1.2)
			if err != nil {
				return err
			}
			if d.Mean != nil {
				l, h := make([]float64, len(x)), make([]float64, len(x))
				for i := range x {
					l[i], h[i] = d.Mean[i]-2*d.SD[i], d.Mean[i]+2*d.SD[i]
				}
				b, err := band(x, l, h, Band)
				if err != nil {
					return err
				}
				m, err := line(x, d.Mean, Mean, 1.4)
				if err != nil {
					return err
				}
				p.Add(b, m)
				if k == 0 {
					p.Legend.Add("mean", m)
					p.Legend.Add("± 2 sd", swatch{Band})
				}
			}
			p.Add(pts)
			if k == 0 {
				p.Legend.Add("data", pts)
			}
			p.Y.Min, p.Y.Max = lo-0.05*(hi-lo), hi+0.05*(hi-lo)
			p.Draw(tiles.At(dc, k, 0))
		}
		return nil
	})
}

// Messages writes the message figure (montecarlo) as a slide.
func Messages(w io.Writer, format string, fd *montecarlo.FigureData, cap Caption) error {
	key := "left: each input's true response (Monte Carlo, black) and the Gaussian message (its colour); top right: the layer's GP, mean ± 2 sd, inducing variables u in red; bottom right: the inputs"
	return Render(w, format, fmt.Sprintf("Messages through layer %d: the Gaussian against the truth", fd.Layer+1), key, cap, func(dc draw.Canvas) error {
		return montecarlo.DrawMessageFigure(dc, fd)
	})
}

// Faces writes the autoencoder's latent map with decoded tiles as a slide.
func Faces(w io.Writer, format string, f *faces.FigureData, cap Caption) error {
	key := "dots: each row's latent mean, coloured by its index; tiles: the decoder's predictive mean at points of a grid"
	return Render(w, format, "The autoencoder's latent map", key, cap, func(dc draw.Canvas) error {
		return faces.Draw(dc, f)
	})
}

// Latent writes the explorer's latent views as a slide: each hidden
// layer's first two dimensions, and the ground truth when the data carry
// it, coloured by the first input.
func Latent(w io.Writer, format string, f *latent.FigureData, cap Caption) error {
	n := len(f.Times)
	if len(f.Layers) == 0 || n == 0 {
		return fmt.Errorf("no hidden layer with 2 or more dimensions to draw")
	}
	colour, lo, hi := f.Colours()
	label := f.TimeLabel
	if label == "" {
		label = "the input"
	}
	key := fmt.Sprintf("colour: %s, from %.4g (purple) to %.4g (yellow); dots joined in that order", label, lo, hi)
	return Render(w, format, "The latent space: every hidden layer's message means", key, cap, func(dc draw.Canvas) error {
		cols := len(f.Layers)
		if f.Truth != nil {
			cols++
		}
		tiles := draw.Tiles{Rows: 1, Cols: cols, PadX: 3 * vg.Millimeter}
		panel := func(k int, title, xl, yl string, at func(i int) (float64, float64)) error {
			p := newPlot(xl, yl)
			p.Title.Text = title
			pts := make(plotter.XYs, n)
			for i := range pts {
				pts[i].X, pts[i].Y = at(i)
			}
			ln, err := plotter.NewLine(pts)
			if err != nil {
				return fmt.Errorf("%s: %w", title, err)
			}
			ln.Color, ln.Width = color.RGBA{R: 0x60, G: 0x60, B: 0x60, A: 0x50}, vg.Points(0.4)
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return fmt.Errorf("%s: %w", title, err)
			}
			sc.GlyphStyleFunc = func(i int) draw.GlyphStyle {
				return draw.GlyphStyle{Color: colour(i), Radius: vg.Points(1.3), Shape: draw.CircleGlyph{}}
			}
			p.Add(ln, sc)
			p.Draw(tiles.At(dc, k, 0))
			return nil
		}
		for k, l := range f.Layers {
			title := l.Name
			if k < len(f.Scores) && !math.IsNaN(f.Scores[k]) {
				title += fmt.Sprintf(" (geometry %.3f)", f.Scores[k])
			}
			if err := panel(k, title, l.Name+" dimension 1", l.Name+" dimension 2", func(i int) (float64, float64) { return l.Mean.At(i, 0), l.Mean.At(i, 1) }); err != nil {
				return err
			}
		}
		if f.Truth != nil {
			xl, yl := "truth 1", "truth 2"
			if len(f.TruthNames) >= 2 {
				xl, yl = f.TruthNames[0], f.TruthNames[1]
			}
			if err := panel(cols-1, "ground truth (never used for fitting)", xl, yl, func(i int) (float64, float64) { return f.Truth.At(i, 0), f.Truth.At(i, 1) }); err != nil {
				return err
			}
		}
		return nil
	})
}
