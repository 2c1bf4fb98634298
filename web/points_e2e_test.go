package web

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserPoints draws a handful of rows with the explorer's every-row
// drawing (static/views/explorer/points.js) at two device pixels per CSS
// pixel and checks every pixel of its canvas against the squares worked
// out here: each row a 4 × 4 square centred on c₀ + Σ cₖ·x_dimsₖ (CSS px,
// doubled), in its value's bin of the colour scale at alpha 140, two
// overlapping rows' alpha as "source-over" builds it (140, then 203), a
// row outside the view's box or with a NaN mean not drawn; and an
// unchanged second draw skipped.
func TestBrowserPoints(t *testing.T) {
	e := newE2E(t)
	e.run(chromedp.Navigate(e.base + "/"))
	e.waitFor("the page", `window.dgpviz !== undefined`)
	// rows (d = 2): places in CSS px through px = [1, 0, 0, 10], py = [0, 1, 0, 5]
	// (dims [0, 1, 1]), i.e. (10 + x₁, 5 + x₂); values 0.1, 0.6, 0.9, …
	got := evalAs[[]float64](e, `(async () => {
	  const { createPoints, pointStats } = await import("/static/views/explorer/points.js");
	  const { paletteRGB } = await import("/static/colormap.js");
	  const box = document.createElement("div"); box.style.position = "relative";
	  const cv = document.createElement("canvas"); cv.width = 200; cv.height = 100;
	  box.append(cv); document.body.append(box);
	  const mean = new Float32Array([
	    20, 10,   // (30, 15): bin 0
	    50, 30,   // (60, 35): bin 2
	    50.5, 30, // (60.5, 35): overlaps the last, bin 3 (drawn later: its colour)
	    95, 10,   // (105, 15): outside the box (x < 90)
	    NaN, 10,  // not drawn
	  ]);
	  const v = new Float32Array([0.1, 0.6, 0.9, 0.2, 0.3]);
	  const P = createPoints(cv), view = { dims: [0, 1, 1], px: [1, 0, 0, 10], py: [0, 1, 0, 5], box: { l: 5, t: 5, r: 90, b: 45 } };
	  const scale = { lo: 0, hi: 1, bins: 4 };
	  const drew = P.draw(100, 50, { mean, d: 2, n: 5, v }, [view], scale);
	  const s0 = pointStats.skipped;
	  P.draw(100, 50, { mean, d: 2, n: 5, v }, [view], scale);
	  const over = box.querySelector("canvas.rv-points");
	  const px = over.getContext("2d").getImageData(0, 0, 200, 100).data;
	  return [drew ? 1 : 0, pointStats.skipped - s0, ...paletteRGB(4).flat(), ...px];
	})()`)
	if got[0] != 1 || got[1] != 1 {
		t.Fatalf("drew %v, skipped the unchanged second draw %v times: want 1 and 1", got[0], got[1])
	}
	pal, px := got[2:14], got[14:]
	type pixel struct{ r, g, b, a float64 }
	want := make([]pixel, 200*100)
	colour := func(bin int, a float64) pixel {
		return pixel{pal[3*bin], pal[3*bin+1], pal[3*bin+2], a}
	}
	square := func(cx, cy float64, p pixel) { // device px: a 4-pixel square centred on (2cx, 2cy)
		for y := int(2*cy) - 2; y < int(2*cy)+2; y++ {
			for x := int(2*cx) - 2; x < int(2*cx)+2; x++ {
				q, w := want[y*200+x], p
				if q.a > 0 { // source-over's alpha: a + (255 − a)·140/255, rounded
					w.a = q.a + float64((int(255-q.a)*140+127)/255)
				}
				want[y*200+x] = w
			}
		}
	}
	square(30, 15, colour(0, 140))
	square(60, 35, colour(2, 140))
	square(60.5, 35, colour(3, 140))
	bad := 0
	for i, w := range want {
		g := pixel{px[4*i], px[4*i+1], px[4*i+2], px[4*i+3]}
		// ImageData is unpremultiplied; a 2-D canvas stores premultiplied
		// colour, so the colour read back is within a step or two of it
		if w.a != g.a || w.a > 0 && (abs(w.r-g.r) > 2 || abs(w.g-g.g) > 2 || abs(w.b-g.b) > 2) {
			if bad++; bad <= 5 {
				t.Errorf("pixel (%d, %d): got rgba %v, want %v", i%200, i/200, g, w)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d pixels differ", bad)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
