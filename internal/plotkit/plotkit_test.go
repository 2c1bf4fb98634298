package plotkit

import (
	"bytes"
	"image/png"
	"math"
	"strings"
	"testing"

	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font/liberation"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgpdf"

	"dgpviz/internal/plotkit/plotkittest"
)

// TestNewCanvasSlideResolution: a PNG is at least SlidePixels wide however
// small the figure, every format writes its own header, unknown formats are
// refused.
func TestNewCanvasSlideResolution(t *testing.T) {
	for _, w := range []vg.Length{2 * vg.Inch, 16 * vg.Centimeter, 30 * vg.Inch} {
		c, err := NewCanvas("png", w, vg.Inch/4) // low: the width is what is checked
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := img.Bounds().Dx(); got < SlidePixels {
			t.Errorf("width %v: %d pixels, want ≥ %d", w, got, SlidePixels)
		}
	}
	for format, prefix := range map[string]string{"svg": "<?xml", "pdf": "%PDF"} {
		c, err := NewCanvas(format, vg.Inch, vg.Inch)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		c.WriteTo(&buf)
		if !bytes.HasPrefix(buf.Bytes(), []byte(prefix)) {
			t.Errorf("%s starts %q", format, buf.Bytes()[:min(8, buf.Len())])
		}
	}
	if _, err := NewCanvas("gif", vg.Inch, vg.Inch); err == nil {
		t.Error("gif accepted")
	}
}

// TestPad: 5 % either side; an empty range gets a width of its own.
func TestPad(t *testing.T) {
	for _, tc := range []struct{ lo, hi, wlo, whi float64 }{
		{0, 10, -0.5, 10.5},
		{3, 3, 1.5, 4.5},  // width |3| = 3
		{0, 0, -0.5, 0.5}, // width at least 1
	} {
		if got := Pad(tc.lo, tc.hi); got != [2]float64{tc.wlo, tc.whi} {
			t.Errorf("Pad(%v, %v) = %v, want [%v %v]", tc.lo, tc.hi, got, tc.wlo, tc.whi)
		}
	}
}

// TestMeanBand: the band runs along mean + 2 sd and back along mean − 2 sd.
func TestMeanBand(t *testing.T) {
	poly, line, err := MeanBand(Curve{X: []float64{0, 1}, Mean: []float64{1, 2}, SD: []float64{0.5, 1}}, Palette[0])
	if err != nil {
		t.Fatal(err)
	}
	ring := poly.XYs[0]
	want := []float64{2, 4, 0, 0} // y: 1+1, 2+2, 2−2, 1−1
	for i, y := range want {
		if ring[i].Y != y {
			t.Errorf("band point %d: y = %v, want %v", i, ring[i].Y, y)
		}
	}
	if line.XYs[1].Y != 2 {
		t.Errorf("mean line %v", line.XYs)
	}
	if len(PaletteHex()) != len(Palette) || PaletteHex()[0] != "#1f77b4" {
		t.Errorf("PaletteHex %v", PaletteHex())
	}
}

// BenchmarkPNG encodes a figure-like image (a band, a curve, axes, text)
// at slide resolution with png.BestSpeed, as pngCanvas does, and with the
// default level, as vgimg.PngCanvas does; bytes/figure is the file size.
func BenchmarkPNG(b *testing.B) {
	p := plot.New()
	p.Title.Text = "a figure"
	c := Curve{}
	for i := range 400 {
		x := float64(i) / 40
		c.X, c.Mean, c.SD = append(c.X, x), append(c.Mean, math.Sin(x)), append(c.SD, 0.2+0.1*math.Cos(3*x))
	}
	band, line, err := MeanBand(c, Palette[0])
	if err != nil {
		b.Fatal(err)
	}
	p.Add(band, line)
	canvas := PNGCanvas(16*vg.Centimeter, 10*vg.Centimeter, int(math.Ceil(SlidePixels/(16/2.54))))
	p.Draw(draw.New(canvas.(pngCanvas).Canvas))
	img := canvas.(pngCanvas).Image()
	for _, level := range []png.CompressionLevel{png.BestSpeed, png.DefaultCompression} {
		b.Run(map[png.CompressionLevel]string{png.BestSpeed: "best-speed", png.DefaultCompression: "default"}[level], func(b *testing.B) {
			var buf bytes.Buffer
			enc := png.Encoder{CompressionLevel: level}
			for b.Loop() {
				buf.Reset()
				if err := enc.Encode(&buf, img); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len()), "bytes/figure")
		})
	}
}

// printed is a label with every character outside ASCII that the figures
// and slides draw (grep their strings), and the Greek letters the model's
// terms are named with.
const printed = "bound −15.65 nats · 10–90 % · ± 2 sd · ≥ 2 modes · μ₁ σ² ψ Ψ Δ · 3 × 4 … “quoted” — end"

// drawPrinted draws printed as a plot's title, axis label and tick-sized
// text on a canvas of format, and returns the file.
func drawPrinted(t *testing.T, format string) []byte {
	t.Helper()
	p := plot.New()
	p.Title.Text = printed
	p.X.Label.Text = printed
	c, err := NewCanvas(format, 8*vg.Inch, 3*vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPDFPrintsUnicode: the PDF's text, extracted by pdftotext, is the
// label as drawn — not its UTF-8 bytes read as cp1252 ("âˆ’15.65"), which
// gonum/plot's own PDF canvas printed.
func TestPDFPrintsUnicode(t *testing.T) {
	text := plotkittest.PDFText(t, drawPrinted(t, "pdf"))
	if n := strings.Count(text, printed); n != 2 {
		t.Errorf("the label printed %d times, want 2 (title and axis); the PDF's text:\n%s", n, text)
	}
}

// TestSVGPrintsUnicode: an SVG keeps the label's characters and names a
// generic family after Liberation, for viewers without it.
func TestSVGPrintsUnicode(t *testing.T) {
	svg := string(drawPrinted(t, "svg"))
	if n := strings.Count(svg, ">"+printed+"<"); n != 2 {
		t.Errorf("the label appears %d times, want 2", n)
	}
	if strings.Contains(svg, "font-family:Liberation Serif;") || !strings.Contains(svg, "font-family:'Liberation Serif',serif;") {
		t.Error("the SVG's font has no generic fallback")
	}
}

// TestFontsHaveTheGlyphs: the fonts a PNG is drawn with have a glyph for
// every character of the label, so none prints as an empty box.
func TestFontsHaveTheGlyphs(t *testing.T) {
	var buf sfnt.Buffer
	for _, f := range liberation.Collection() {
		for _, r := range printed {
			if i, err := f.Face.GlyphIndex(&buf, r); err != nil || i == 0 {
				t.Errorf("%s %s: no glyph for %q", f.Font.Typeface, f.Font.Variant, r)
			}
		}
	}
}

// BenchmarkPDF writes a figure-like plot (a band, a curve, axes, a title
// with the figures' characters) as PDF with plotkit's canvas (Unicode
// fonts, subset) and with gonum/plot's vgpdf (cp1252, whole fonts), for
// their time and size; bytes/figure is the file size.
func BenchmarkPDF(b *testing.B) {
	c := Curve{}
	for i := range 400 {
		x := float64(i) / 40
		c.X, c.Mean, c.SD = append(c.X, x), append(c.Mean, math.Sin(x)), append(c.SD, 0.2+0.1*math.Cos(3*x))
	}
	band, line, err := MeanBand(c, Palette[0])
	if err != nil {
		b.Fatal(err)
	}
	for _, canvas := range []struct {
		name string
		make func(w, h vg.Length) vg.CanvasWriterTo
	}{
		{"plotkit", func(w, h vg.Length) vg.CanvasWriterTo { return newPDFCanvas(w, h) }},
		{"vgpdf", func(w, h vg.Length) vg.CanvasWriterTo { return vgpdf.New(w, h) }},
	} {
		b.Run(canvas.name, func(b *testing.B) {
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				p := plot.New()
				p.Title.Text = printed
				p.Add(band, line)
				cw := canvas.make(16*vg.Centimeter, 10*vg.Centimeter)
				p.Draw(draw.New(cw))
				buf.Reset()
				if _, err := cw.WriteTo(&buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len()), "bytes/figure")
		})
	}
}
