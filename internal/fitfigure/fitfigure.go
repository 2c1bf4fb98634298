// Package fitfigure draws the fit of a model with a 1-D input and output: the
// data and the predictive mean ± 2 sd of the final Gaussian message, in the
// data's original units, one panel per model (the paper's step-function
// figure for 1, 2 and 3 layers is three of them stacked).
package fitfigure

import (
	"cmp"
	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/linalg"
	"dgpviz/internal/plotkit"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Sizes of one panel and of its prediction grid.
const (
	PanelWidth  = 16 * vg.Centimeter
	PanelHeight = 5 * vg.Centimeter
	// GridPoints is the default number of prediction inputs.
	GridPoints = 200
	// MaxGridPoints bounds the prediction inputs a caller may ask for.
	MaxGridPoints = 1 << 16
)

// FitData is the fit panel of a model with a 1-D input and output, in the
// data's original units: the data, and the predictive mean ± 2 sd of the
// Gaussian messages (noise included) on a grid.
type FitData struct {
	Layers int           `json:"layers"`
	Bound  float64       `json:"bound"` // the model's bound (nats), for the title
	X      []float64     `json:"x"`
	Y      []float64     `json:"y"`
	Grid   plotkit.Curve `json:"grid"`
	// XName and YName label the axes: the data's names of the input and
	// the output ("" : x and y).
	XName string `json:"x_name,omitempty"`
	YName string `json:"y_name,omitempty"`
	// XUnit and YUnit are the units of the input and output, for the
	// axes ("s", "dBm"); "" when the data name none.
	XUnit string `json:"x_unit,omitempty"`
	YUnit string `json:"y_unit,omitempty"`
}

// FitFigure predicts the model on `points` inputs (0: GridPoints)
// spanning its data's inputs padded by 5%, and undoes the normalisation
// nx, ny of its data (the zero Normalizer: the identity).
func FitFigure(m *engine.Model, nx, ny dataset.Normalizer, points int) (*FitData, error) {
	if m == nil {
		return nil, fmt.Errorf("nil model")
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	n, q := m.X.Dims()
	_, d := m.Y.Dims()
	if q != 1 || d != 1 {
		return nil, fmt.Errorf("the fit figure needs 1-D inputs and outputs, the model has %d and %d", q, d)
	}
	if points == 0 {
		points = GridPoints
	}
	if points < 2 || points > MaxGridPoints {
		return nil, fmt.Errorf("%d grid points, want 2…%d", points, MaxGridPoints)
	}
	xm, xsc, ym, ysc := 0.0, 1.0, 0.0, 1.0
	if nx.Mean != nil || ny.Mean != nil {
		if len(nx.Mean) != 1 || len(nx.Scale) != 1 || len(ny.Mean) != 1 || len(ny.Scale) != 1 {
			return nil, fmt.Errorf("the normalisation must have one column for a 1-D model")
		}
		xm, xsc, ym, ysc = nx.Mean[0], nx.Scale[0], ny.Mean[0], ny.Scale[0]
	}
	xs := linalg.Flatten(nil, m.X)
	lo, hi := slices.Min(xs), slices.Max(xs)
	r := plotkit.Pad(lo, hi)
	grid := mat.NewDense(points, 1, nil)
	for i := 0; i < points; i++ {
		grid.Set(i, 0, r[0]+(r[1]-r[0])*float64(i)/float64(points-1))
	}
	var ev engine.Evaluator
	msgs, err := ev.Predict(m, grid)
	if err != nil {
		return nil, err
	}
	last := msgs[len(msgs)-1]
	res, _, err := ev.Evaluate(m, engine.Options{})
	if err != nil {
		return nil, err
	}
	fd := &FitData{Layers: len(m.Layers), Bound: res.Bound, X: make([]float64, n), Y: make([]float64, n),
		Grid: plotkit.Curve{X: make([]float64, points), Mean: make([]float64, points), SD: make([]float64, points)}}
	for i := 0; i < n; i++ {
		fd.X[i] = m.X.At(i, 0)*xsc + xm
		fd.Y[i] = m.Y.At(i, 0)*ysc + ym
	}
	for i := 0; i < points; i++ {
		fd.Grid.X[i] = grid.At(i, 0)*xsc + xm
		fd.Grid.Mean[i] = last.Mean.At(i, 0)*ysc + ym
		fd.Grid.SD[i] = math.Sqrt(last.Var.At(i, 0)) * ysc
	}
	return fd, nil
}

// RenderFit draws one fit panel per FitData, stacked top to bottom (the
// step-function figure for 1, 2 and 3 layers), in the given format to w:
// the data as dots and the predictive mean ± 2 sd.
func RenderFit(w io.Writer, format string, fits []*FitData) error {
	if len(fits) == 0 {
		return fmt.Errorf("RenderFit needs at least one fit")
	}
	for i, f := range fits {
		if f == nil || len(f.Grid.X) < 2 {
			return fmt.Errorf("fit %d has no prediction grid", i+1)
		}
	}
	c, err := plotkit.NewCanvas(format, PanelWidth, PanelHeight*vg.Length(len(fits)))
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
	xName, yName := cmp.Or(f.XName, "x"), cmp.Or(f.YName, "y")
	p.X.Label.Text = withUnit(xName, f.XUnit)
	p.Y.Label.Text = withUnit(yName+" (mean ± 2 sd)", f.YUnit)
	p.X.Label.TextStyle.Font.Size = vg.Points(7)
	p.Y.Label.TextStyle.Font.Size = vg.Points(7)
	plotkit.SetTickSizes(p)
	poly, line, err := plotkit.MeanBand(f.Grid, color.RGBA{R: 0xc6, G: 0xdb, B: 0xef, A: 0xff})
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	line.Color = plotkit.Color(0)
	line.Width = vg.Points(1.5)
	pts := make(plotter.XYs, len(f.X))
	for i := range pts {
		pts[i] = plotter.XY{X: f.X[i], Y: f.Y[i]}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, fmt.Errorf("fit data: %w", err)
	}
	sc.GlyphStyle.Radius = vg.Points(1.2)
	sc.GlyphStyle.Color = color.Black
	p.Add(poly, line, sc)
	return p, nil
}

// withUnit labels an axis with its unit, "x (s)", or leaves it bare when
// the data name none.
func withUnit(label, unit string) string {
	if unit == "" {
		return label
	}
	return label + " (" + unit + ")"
}
