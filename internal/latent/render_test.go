package latent

import (
	"bytes"
	"dgpviz/internal/plotkit"
	"image/png"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestViridisEnds(t *testing.T) {
	// matplotlib's viridis starts at #440154 and ends at #fde725.
	if c := Viridis(0); c.R != 68 || c.G != 1 || c.B != 84 {
		t.Errorf("Viridis(0) = %v", c)
	}
	if c := Viridis(1); c.R != 253 || c.G != 231 || c.B != 37 {
		t.Errorf("Viridis(1) = %v", c)
	}
	if Viridis(-1) != Viridis(0) || Viridis(2) != Viridis(1) || Viridis(math.NaN()) != Viridis(0) {
		t.Error("Viridis does not clamp")
	}
}

func TestRenderFigure(t *testing.T) {
	const n = 60
	path := loopPath(n)
	times := make([]float64, n)
	lat := mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		times[i] = float64(i) * 1.5
		lat.Set(i, 0, path.At(i, 0))
		lat.Set(i, 1, path.At(i, 1))
		lat.Set(i, 2, float64(i))
	}
	f := &FigureData{Times: times, Layers: []LayerMessages{{Name: "h1", Mean: lat}, {Name: "h2", Mean: lat}}, Scores: []float64{0.9, math.NaN()}, Truth: path}
	for _, format := range plotkit.Formats {
		var buf bytes.Buffer
		if err := RenderFigure(&buf, format, f); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		switch format {
		case "png":
			img, err := png.Decode(&buf)
			if err != nil {
				t.Fatalf("png: %v", err)
			}
			// 4 columns (3 projections + the path) × 2 rows of 2.6 in, and
			// the colour bar's 0.55 in strip, at 154 dpi: 1600 pixels wide
			// (slide resolution).
			const dpi = 154
			if b := img.Bounds(); b.Dx() != int(math.Round(4*2.6*dpi)) || b.Dx() < 1600 || b.Dy() != int(math.Round((2*2.6+0.55)*dpi)) {
				t.Errorf("png is %v", b)
			}
			// The colour bar: the first and last colours of the map, in a
			// row near the bottom (the strip's middle band).
			w := img.Bounds().Dx()
			y := img.Bounds().Dy() - 55*dpi/100 + 55*dpi/200 - 10
			left, right := img.At(dpi*6/10+20, y), img.At(w-dpi*6/10-20, y)
			if r, g, b, _ := left.RGBA(); !(r>>8 < 110 && b>>8 > 70 && g>>8 < 120) {
				t.Errorf("colour bar's left end %v is not viridis' dark purple", left)
			}
			if r, g, _, _ := right.RGBA(); !(r>>8 > 200 && g>>8 > 200) {
				t.Errorf("colour bar's right end %v is not viridis' yellow", right)
			}
		case "svg":
			if !strings.Contains(buf.String(), "<svg") || !strings.Contains(buf.String(), "geometry 0.900") || !strings.Contains(buf.String(), "colour: time") {
				t.Error("svg lacks the figure or the score")
			}
		case "pdf":
			if !bytes.HasPrefix(buf.Bytes(), []byte("%PDF")) {
				t.Error("not a PDF")
			}
		}
	}
	bad := []struct {
		name string
		f    *FigureData
	}{
		{"no layers", &FigureData{Times: times}},
		{"1-D layer", &FigureData{Times: times, Layers: []LayerMessages{{Name: "h", Mean: mat.NewDense(n, 1, nil)}}}},
		{"row mismatch", &FigureData{Times: times[:10], Layers: []LayerMessages{{Name: "h", Mean: lat}}}},
		{"ground truth shape", &FigureData{Times: times, Layers: []LayerMessages{{Name: "h", Mean: lat}}, Truth: mat.NewDense(n, 1, nil)}},
	}
	for _, b := range bad {
		if err := RenderFigure(&bytes.Buffer{}, "png", b.f); err == nil {
			t.Errorf("%s: accepted", b.name)
		}
	}
	if err := RenderFigure(&bytes.Buffer{}, "gif", f); err == nil {
		t.Error("gif accepted")
	}
}
