package web

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// pageType reads the page's small type: the canvases' drawing scale, and
// the font sizes (CSS px) of a readout card's label, a legend, the bound's
// table of terms, a control's label and a panel's title.
const pageType = `(() => {
  const px = (sel) => parseFloat(getComputedStyle(document.querySelector(sel)).fontSize);
  return [window.dgpviz.drawScale(), px(".readout dt"), px("#panel-bound .legend"), px("#panel-bound table.terms"), px("#controls label"), px("#panel-fit .panel-head h2")];
})()`

// TestBrowserPageType: the page's own (not presenting) type at a 1920×1080
// window, read from afar, is 13 px or more (a card's capitals 12.5), its
// canvases drawn 15 % larger; a 1024×768 projector keeps the compact type
// it has room for, and presenting keeps its own scale.
func TestBrowserPageType(t *testing.T) {
	e := newE2E(t)
	e.openPaused()
	e.waitFor("the bound's table", `!!document.querySelector("#panel-bound table.terms")`)
	names := []string{"drawing scale", "a card's label", "a legend", "the bound's table", "a control's label", "a panel's title"}
	e.run(chromedp.EmulateViewport(1920, 1080))
	e.waitFor("the wide page", `document.body.classList.contains("wide")`)
	got := evalAs[[]float64](e, pageType)
	t.Logf("at 1920×1080: %v", got)
	if got[0] < 13.0/12 {
		t.Errorf("at 1920×1080 the canvases are drawn at %v: their 12 px ticks read under 13 px", got[0])
	}
	for i, want := range []float64{12.5, 13, 13, 13, 13} {
		if got[i+1] < want {
			t.Errorf("at 1920×1080 %s is %v px, want at least %v", names[i+1], got[i+1], want)
		}
	}
	e.run(chromedp.EmulateViewport(1024, 768))
	e.waitFor("the compact page", `!document.body.classList.contains("wide")`)
	got = evalAs[[]float64](e, pageType)
	t.Logf("at 1024×768: %v", got)
	if fmt.Sprint(got) != fmt.Sprint([]float64{1, 11, 12, 12, 13, 14}) {
		t.Errorf("at 1024×768 the page's type is %v, want it as it was: [1 11 12 12 13 14]", got)
	}
	e.run(chromedp.EmulateViewport(1920, 1080))
	e.eval(`document.dispatchEvent(new KeyboardEvent("keydown", {key: "p"})), true`, nil)
	e.waitFor("presentation mode", `document.body.classList.contains("present") && !document.body.classList.contains("wide")`)
	if k := evalAs[float64](e, `window.dgpviz.drawScale()`); k != 1.4 {
		t.Errorf("presenting at 1920×1080 draws at %v, want its own scale 1.4", k)
	}
	e.noErrors()
}
