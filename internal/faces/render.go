package faces

import (
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"strconv"

	"dgpviz/internal/latent"
	"dgpviz/internal/plotkit"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// FigureData is the latent map with image tiles.
type FigureData struct {
	Latent        *mat.Dense // N×2 latent means, row i = row i+1 of the data
	Height, Width int        // image rows and columns (Height·Width = D)
	Tiles         []Tile     // decoded images at latent positions
	Lo, Hi        float64    // grey levels mapped to black and white
	// RowName is what a row of the data is ("frame"), for the colour
	// bar's title; "" for "row".
	RowName string
}

// Tile is a decoded image at a latent position.
type Tile struct {
	X, Y   float64
	Pixels []float64 // Height·Width grey levels, row-major
}

// PNGDPI and the figure's size in inches give PNGs of 2000 × 1600 pixels,
// slide resolution.
const (
	PNGDPI       = 200
	figureWidth  = 10 * vg.Inch
	figureHeight = 8 * vg.Inch
)

// Grid returns g×g latent positions spanning the points' range (the
// centres of a g×g partition of their bounding box).
func Grid(latent *mat.Dense, g int) []float64 {
	n, _ := latent.Dims()
	lo := [2]float64{math.Inf(1), math.Inf(1)}
	hi := [2]float64{math.Inf(-1), math.Inf(-1)}
	for i := range n {
		for c := range 2 {
			lo[c] = math.Min(lo[c], latent.At(i, c))
			hi[c] = math.Max(hi[c], latent.At(i, c))
		}
	}
	out := make([]float64, 0, 2*g*g)
	for r := range g {
		for c := range g {
			out = append(out, lo[0]+(float64(c)+0.5)*(hi[0]-lo[0])/float64(g), lo[1]+(float64(r)+0.5)*(hi[1]-lo[1])/float64(g))
		}
	}
	return out
}

// Render writes the figure in format ("svg", "png" or "pdf").
func Render(w io.Writer, format string, f *FigureData) error {
	n, q := f.Latent.Dims()
	if q != 2 || n == 0 {
		return fmt.Errorf("latent of %d×%d, want N×2 with N ≥ 1", n, q)
	}
	var c vg.CanvasWriterTo
	if format == "png" {
		c = plotkit.PNGCanvas(figureWidth, figureHeight, PNGDPI)
	} else {
		var err error
		if c, err = plotkit.NewCanvas(format, figureWidth, figureHeight); err != nil {
			return err
		}
	}
	if err := Draw(draw.New(c), f); err != nil {
		return err
	}
	_, err := c.WriteTo(w)
	return err
}

// Draw draws the figure on dc (a slide's body, say): the latent map with
// its tiles, and the colour bar on the right.
func Draw(dc draw.Canvas, f *FigureData) error {
	n, q := f.Latent.Dims()
	if q != 2 || n == 0 {
		return fmt.Errorf("a latent of %d×%d, want N×2 with N ≥ 1", n, q)
	}
	p := plot.New()
	p.Title.Text = "Latent space of the autoencoding deep GP, with decoded images"
	p.X.Label.Text = "latent dimension 1"
	p.Y.Label.Text = "latent dimension 2"
	// Tile size: a fraction of the latent range, with the image's aspect.
	minX, maxX, minY, maxY := plotter.XYRange(latentXYs(f.Latent))
	th := (maxY - minY) / 9
	tw := th * float64(f.Width) / float64(f.Height) * (maxX - minX) / (maxY - minY) * float64(dc.Max.Y-dc.Min.Y) / float64(dc.Max.X-dc.Min.X-1.7*vg.Inch)
	for _, t := range f.Tiles {
		if len(t.Pixels) != f.Height*f.Width {
			return fmt.Errorf("tile of %d pixels, want %d×%d", len(t.Pixels), f.Height, f.Width)
		}
		p.Add(plotter.NewImage(greyImage(t.Pixels, f.Height, f.Width, f.Lo, f.Hi), t.X-tw/2, t.Y-th/2, t.X+tw/2, t.Y+th/2))
	}
	sc, err := plotter.NewScatter(latentXYs(f.Latent))
	if err != nil {
		return err
	}
	sc.GlyphStyleFunc = func(i int) draw.GlyphStyle {
		return draw.GlyphStyle{Color: latent.Viridis(float64(i) / math.Max(1, float64(n-1))), Radius: vg.Points(1.6), Shape: draw.CircleGlyph{}}
	}
	p.Add(sc)

	bar := plot.New()
	row := f.RowName
	if row == "" {
		row = "row"
	}
	bar.Title.Text = row + " (from 1)"
	bar.HideX()
	bar.Y.Padding = 0
	cm := &viridisMap{min: 1, max: float64(max(n, 2)), alpha: 1} // rows counted from 1
	bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true, Colors: 64})
	bar.Y.Tick.Marker = wholeTicks{}

	right := dc
	right.Min.X = dc.Max.X - 1.6*vg.Inch
	main := dc
	main.Max.X = right.Min.X - 0.1*vg.Inch
	p.Draw(main)
	right.Min.Y += 0.5 * vg.Inch
	right.Max.Y -= 0.2 * vg.Inch
	bar.Draw(right)
	return nil
}

func latentXYs(a *mat.Dense) plotter.XYs {
	n, _ := a.Dims()
	xy := make(plotter.XYs, n)
	for i := range n {
		xy[i].X, xy[i].Y = a.At(i, 0), a.At(i, 1)
	}
	return xy
}

// greyImage maps grey levels lo…hi to black…white (clamped).
func greyImage(px []float64, h, w int, lo, hi float64) image.Image {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for k, v := range px {
		t := (v - lo) / (hi - lo)
		if math.IsNaN(t) {
			t = 0
		}
		img.Pix[k] = uint8(math.Round(255 * math.Max(0, math.Min(1, t))))
	}
	return img
}

// viridisMap is latent.Viridis as a palette.ColorMap for the colour bar.
type viridisMap struct{ min, max, alpha float64 }

func (m *viridisMap) At(v float64) (color.Color, error) {
	if v < m.min || v > m.max {
		return nil, palette.ErrOverflow
	}
	t := 0.5
	if m.max > m.min {
		t = (v - m.min) / (m.max - m.min)
	}
	c := latent.Viridis(t)
	c.A = uint8(math.Round(255 * m.alpha))
	return c, nil
}
func (m *viridisMap) Max() float64       { return m.max }
func (m *viridisMap) SetMax(v float64)   { m.max = v }
func (m *viridisMap) Min() float64       { return m.min }
func (m *viridisMap) SetMin(v float64)   { m.min = v }
func (m *viridisMap) Alpha() float64     { return m.alpha }
func (m *viridisMap) SetAlpha(a float64) { m.alpha = a }
func (m *viridisMap) Palette(n int) palette.Palette {
	cs := make([]color.Color, n)
	for i := range cs {
		cs[i] = latent.Viridis(float64(i) / math.Max(1, float64(n-1)))
	}
	return colors(cs)
}

type colors []color.Color

func (c colors) Colors() []color.Color { return c }

// wholeTicks labels a row axis with whole numbers ("1750", not "1750.00").
type wholeTicks struct{}

func (wholeTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	out := ts[:0]
	for _, t := range ts {
		if t.Label != "" {
			if t.Value != math.Round(t.Value) {
				continue // no row 1.5
			}
			t.Label = strconv.FormatFloat(t.Value, 'f', 0, 64)
		}
		out = append(out, t)
	}
	return out
}
