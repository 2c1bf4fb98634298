package plotkit

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

	"codeberg.org/go-pdf/fpdf"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// pdfDPI is the resolution of a PDF's user space: one unit is one point.
const pdfDPI = 72

// pdfCanvas draws a figure to a PDF whose text is in embedded Unicode
// TrueType fonts. gonum/plot's vgpdf embeds its fonts in the cp1252 code page,
// so every character outside Latin-1 (−, –, ·, ≥, μ, …) printed as the
// UTF-8 bytes' cp1252 glyphs ("âˆ’15.65"); fpdf's UTF-8 fonts map every
// rune the font has and keep only the glyphs used (a subset). The rest is
// adapted from vgpdf (gonum/plot, BSD licence).
type pdfCanvas struct {
	doc    *fpdf.Fpdf
	w, h   vg.Length
	images int
	stack  []pdfContext
	fonts  map[string]bool // fonts added to doc, by name
	err    error           // the first font that could not be read
}

type pdfContext struct{ width vg.Length }

// newPDFCanvas returns a w × h PDF canvas.
func newPDFCanvas(w, h vg.Length) *pdfCanvas {
	doc := fpdf.NewCustom(&fpdf.InitType{
		UnitStr: "pt",
		Size:    fpdf.SizeType{Wd: w.Points(), Ht: h.Points()},
	})
	c := &pdfCanvas{doc: doc, w: w, h: h, stack: make([]pdfContext, 1), fonts: map[string]bool{}}
	doc.SetMargins(0, 0, 0)
	doc.AddPage()
	c.Push()
	// vg's origin is the bottom left corner, y up.
	c.Translate(vg.Point{X: 0, Y: h})
	c.Scale(1, -1)
	vg.Initialize(c)
	return c
}

func (c *pdfCanvas) context() *pdfContext { return &c.stack[len(c.stack)-1] }

func (c *pdfCanvas) unit(l vg.Length) float64 { return l.Dots(pdfDPI) }

func (c *pdfCanvas) point(p vg.Point) (float64, float64) { return c.unit(p.X), c.unit(p.Y) }

// Size returns the canvas's width and height.
func (c *pdfCanvas) Size() (w, h vg.Length) { return c.w, c.h }

// DPI returns the resolution of the PDF's user space.
func (c *pdfCanvas) DPI() float64 { return pdfDPI }

// SetLineWidth sets the width of stroked paths.
func (c *pdfCanvas) SetLineWidth(w vg.Length) {
	c.context().width = w
	c.doc.SetLineWidth(c.unit(w))
}

// SetLineDash sets the dash pattern of stroked paths.
func (c *pdfCanvas) SetLineDash(dashes []vg.Length, offs vg.Length) {
	ds := make([]float64, len(dashes))
	for i, d := range dashes {
		ds[i] = c.unit(d)
	}
	c.doc.SetDashPattern(ds, c.unit(offs))
}

// SetColor sets the colour of lines, fills and text.
func (c *pdfCanvas) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	r, g, b, a := clr.RGBA()
	c.doc.SetFillColor(int(r>>8), int(g>>8), int(b>>8))
	c.doc.SetDrawColor(int(r>>8), int(g>>8), int(b>>8))
	c.doc.SetTextColor(int(r>>8), int(g>>8), int(b>>8))
	c.doc.SetAlpha(float64(a)/math.MaxUint16, "Normal")
}

// Rotate rotates the coordinates by r radians.
func (c *pdfCanvas) Rotate(r float64) { c.doc.TransformRotate(-r*180/math.Pi, 0, 0) }

// Translate moves the origin to pt.
func (c *pdfCanvas) Translate(pt vg.Point) {
	x, y := c.point(pt)
	c.doc.TransformTranslate(x, y)
}

// Scale scales the coordinates.
func (c *pdfCanvas) Scale(x, y float64) { c.doc.TransformScale(x*100, y*100, 0, 0) }

// Push saves the graphics state.
func (c *pdfCanvas) Push() {
	c.stack = append(c.stack, *c.context())
	c.doc.TransformBegin()
}

// Pop restores the graphics state that Push saved.
func (c *pdfCanvas) Pop() {
	c.doc.TransformEnd()
	c.stack = c.stack[:len(c.stack)-1]
}

// Stroke draws a path's outline.
func (c *pdfCanvas) Stroke(p vg.Path) {
	if c.context().width > 0 {
		c.path(p, "D")
	}
}

// Fill fills a path.
func (c *pdfCanvas) Fill(p vg.Path) { c.path(p, "F") }

// FillString draws str with its baseline's left end at pt.
func (c *pdfCanvas) FillString(fnt font.Face, pt vg.Point, str string) {
	if fnt.Font.Size == 0 || !c.useFont(fnt) {
		return
	}
	c.Push()
	defer c.Pop()
	c.Translate(pt)
	c.Scale(1, -1) // fpdf's text runs in a y-down space
	name := fnt.Name()
	_, h := c.doc.GetFontSize()
	d := c.doc.GetFontDesc(name, "")
	top := -0.81 * h
	if d.Ascent != d.Descent {
		top = -float64(d.Ascent) * h / float64(d.Ascent-d.Descent)
	}
	c.doc.MoveTo(-c.doc.GetCellMargin(), top)
	c.doc.CellFormat(c.doc.GetStringWidth(str), h, str, "", 0, "BL", false, 0, "")
}

// useFont adds fnt to the document as a Unicode font the first time it is
// used and selects it; it reports false once a font could not be read.
func (c *pdfCanvas) useFont(fnt font.Face) bool {
	name := fnt.Name()
	if !c.fonts[name] {
		var raw bytes.Buffer
		if _, err := fnt.Face.WriteSourceTo(nil, &raw); err != nil {
			if c.err == nil {
				c.err = fmt.Errorf("font %s: %w", name, err)
			}
			return false
		}
		c.doc.AddUTF8FontFromBytes(name, "", raw.Bytes())
		c.fonts[name] = true
	}
	c.doc.SetFont(name, "", c.unit(fnt.Font.Size))
	return true
}

// DrawImage draws img into rect.
func (c *pdfCanvas) DrawImage(rect vg.Rectangle, img image.Image) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		if c.err == nil {
			c.err = fmt.Errorf("image: %w", err)
		}
		return
	}
	c.images++
	name := fmt.Sprintf("image_%03d.png", c.images)
	opts := fpdf.ImageOptions{ImageType: "png", ReadDpi: true}
	c.doc.RegisterImageOptionsReader(name, opts, &buf)
	x, y := c.point(rect.Min)
	w, h := c.point(rect.Size())
	c.doc.ImageOptions(name, x, y, w, h, false, opts, 0, "")
}

func (c *pdfCanvas) path(p vg.Path, style string) {
	var x0, y0 float64 // the current subpath's start
	for _, comp := range p {
		switch comp.Type {
		case vg.MoveComp:
			x0, y0 = c.point(comp.Pos)
			c.doc.MoveTo(x0, y0)
		case vg.LineComp:
			c.doc.LineTo(c.point(comp.Pos))
		case vg.ArcComp:
			c.arc(comp, style)
		case vg.CurveComp:
			px, py := c.point(comp.Pos)
			switch len(comp.Control) {
			case 1:
				cx, cy := c.point(comp.Control[0])
				c.doc.CurveTo(cx, cy, px, py)
			case 2:
				cx, cy := c.point(comp.Control[0])
				dx, dy := c.point(comp.Control[1])
				c.doc.CurveBezierCubicTo(cx, cy, dx, dy, px, py)
			}
		case vg.CloseComp:
			c.doc.LineTo(x0, y0)
			c.doc.ClosePath()
		}
	}
	c.doc.DrawPath(style)
}

func (c *pdfCanvas) arc(comp vg.PathComp, style string) {
	at := func(angle float64) (float64, float64) {
		return c.point(vg.Point{
			X: comp.Pos.X + comp.Radius*vg.Length(math.Cos(angle)),
			Y: comp.Pos.Y + comp.Radius*vg.Length(math.Sin(angle)),
		})
	}
	c.doc.LineTo(at(comp.Start))
	r := c.unit(comp.Radius)
	const deg = 180 / math.Pi
	x, y := c.point(comp.Pos)
	c.doc.Arc(x, y, r, r, comp.Angle*deg, comp.Start*deg, (comp.Start+comp.Angle)*deg, style)
	c.doc.MoveTo(at(comp.Start + comp.Angle))
}

// WriteTo writes the PDF to w; the canvas cannot be drawn on after.
func (c *pdfCanvas) WriteTo(w io.Writer) (int64, error) {
	if c.err != nil {
		return 0, c.err
	}
	c.Pop()
	c.doc.Close()
	cw := &countWriter{w: w}
	b := bufio.NewWriter(cw)
	if err := c.doc.Output(b); err != nil {
		return cw.n, err
	}
	err := b.Flush()
	return cw.n, err
}
