package slides

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"dgpviz/internal/fitfigure"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SamplesData is the samples view (the paper's step figure): what the
// whole deep GP predicts by sampling through every layer, over the data's
// range and as much again on either side, in the data's original units.
type SamplesData struct {
	X       []float64   // the density's G inputs
	Edges   []float64   // its B+1 bin edges
	Density []float64   // G×B, row-major
	Modes   []int       // per input: 2 or more is bimodal
	PathX   []float64   // the paths' inputs
	Paths   [][]float64 // sample paths through every layer, at PathX
	Samples int         // per input
	// Fit is the Gaussian final message over the data's range, and the
	// data.
	Fit *fitfigure.FitData
}

// Density is the colour of a Monte Carlo density and Path of a sample
// path (the page's, static/plot.js).
var (
	Density = color.RGBA{R: 55, G: 65, B: 81, A: 0xff}
	Path    = withAlpha(color.RGBA{R: 194, G: 65, B: 12, A: 0xff}, 0.75)
)

// Samples writes the samples view: the density shaded column by column
// (darker where more samples fall), the sample paths, marks along the top
// where the prediction has two or more modes, the Gaussian final message's
// mean ± 2 sd (dashed) and the data.
func Samples(w io.Writer, format string, s *SamplesData, xlabel, ylabel string, cap Caption) error {
	g := len(s.X)
	if g < 2 || len(s.Edges) < 3 || len(s.Density) != g*(len(s.Edges)-1) || len(s.Modes) != g {
		return fmt.Errorf("the samples' density is malformed")
	}
	if s.Fit == nil || len(s.Fit.Grid.X) < 2 {
		return fmt.Errorf("the fit has no prediction grid")
	}
	bimodal := 0
	for _, m := range s.Modes {
		if m >= 2 {
			bimodal++
		}
	}
	// The key says what the marks are: a legend would cover the paths.
	key := fmt.Sprintf("grey: the density of %d samples per input through every layer; orange: %d sample paths, each a continuous function (the layers' noise left out); black marks: %d of %d inputs with two or more modes; blue: the Gaussian final message, ± 2 sd dashed; dots: the data", s.Samples, len(s.Paths), bimodal, g)
	return Render(w, format, "Samples through the network: the predictive beyond the data", key, cap, func(dc draw.Canvas) error {
		p := newPlot(xlabel, ylabel)
		p.Add(densityShade{s})
		for _, path := range s.Paths {
			l, err := line(s.PathX, path, Path, 0.6)
			if err != nil {
				return err
			}
			p.Add(l)
		}
		f := s.Fit.Grid
		lo, hi := make([]float64, len(f.X)), make([]float64, len(f.X))
		for i := range lo {
			lo[i], hi[i] = f.Mean[i]-2*f.SD[i], f.Mean[i]+2*f.SD[i]
		}
		m, err := line(f.X, f.Mean, Mean, 1.4)
		if err != nil {
			return err
		}
		l1, err := line(f.X, lo, Mean, 0.7, vg.Points(3), vg.Points(2))
		if err != nil {
			return err
		}
		l2, err := line(f.X, hi, Mean, 0.7, vg.Points(3), vg.Points(2))
		if err != nil {
			return err
		}
		d, err := dots(s.Fit.X, s.Fit.Y, Data, 1.4)
		if err != nil {
			return err
		}
		p.Add(l1, l2, m, d)
		p.Draw(dc)
		return nil
	})
}

// densityShade draws the samples' density: per input a column of bins,
// each as dark as the square root of its share of the column's highest
// (the page's drawDensity), and along the top a mark at every input with
// two or more modes.
type densityShade struct{ s *SamplesData }

func (d densityShade) Plot(c draw.Canvas, plt *plot.Plot) {
	s := d.s
	tx, ty := plt.Transforms(&c)
	g, b := len(s.X), len(s.Edges)-1
	dx := (s.X[g-1] - s.X[0]) / float64(g-1)
	for i := range g {
		top := 0.0
		for k := range b {
			top = math.Max(top, s.Density[i*b+k])
		}
		if !(top > 0) {
			continue
		}
		x0, x1 := tx(s.X[i]-dx/2), tx(s.X[i]+dx/2)
		for k := range b {
			a := s.Density[i*b+k] / top
			if a < 0.05 {
				continue
			}
			y0, y1 := ty(s.Edges[k]), ty(s.Edges[k+1])
			c.FillPolygon(withAlpha(Density, 0.45*math.Sqrt(a)), []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
		}
		if s.Modes[i] >= 2 {
			y := c.Max.Y
			c.FillPolygon(Data, []vg.Point{{X: x0, Y: y - vg.Points(3)}, {X: x1, Y: y - vg.Points(3)}, {X: x1, Y: y}, {X: x0, Y: y}})
		}
	}
}

// DataRange spans the density's inputs and bins.
func (d densityShade) DataRange() (xmin, xmax, ymin, ymax float64) {
	return d.s.X[0], d.s.X[len(d.s.X)-1], d.s.Edges[0], d.s.Edges[len(d.s.Edges)-1]
}
