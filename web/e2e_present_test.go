package web

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserPresent: presentation mode (?present=1) fits the fit panel,
// every layer and the bound on a 1280×720 projector screen, hides the
// controls, scales type and strokes (A+ and "="), and is driven from the
// keyboard: "]" and "[" add and remove a hidden layer, "p" leaves it. An
// inducing point's handle still lands on its drawn position (pointer
// coordinates follow the scale).
func TestBrowserPresent(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: not in the short tier")
	}
	e := newE2E(t)
	e.run(chromedp.EmulateViewport(1280, 720))
	e.run(chromedp.Navigate(e.base + "/?present=1&play=0&speed=0"))
	e.waitFor("a frame", `window.dgpviz && window.dgpviz.state.frame && window.dgpviz.state.frame.bound != null && window.dgpviz.handle(0, 3) !== null`)
	e.settle()
	visible := func() string {
		return evalAs[string](e, `(() => {
		  const ids = ["panel-fit", "panel-bound", ...[...document.querySelectorAll("#layer-panels > section")].map((s) => s.dataset.testid)];
		  const out = [];
		  for (const id of ids) {
		    const r = document.querySelector('[data-testid="' + id + '"] canvas').getBoundingClientRect();
		    if (r.bottom > innerHeight + 1 || r.right > innerWidth + 1 || r.height < 100) out.push(id + " " + Math.round(r.top) + "–" + Math.round(r.bottom) + " h" + Math.round(r.height));
		  }
		  return out.join(", ");
		})()`)
	}
	if off := visible(); off != "" {
		t.Errorf("at 1280×720 not all on screen: %s", off)
	}
	if evalAs[bool](e, `getComputedStyle(document.getElementById("controls")).display !== "none"`) {
		t.Error("the controls are shown in presentation mode")
	}
	// The handle of layer 1's point 4, in client pixels, is inside its canvas.
	if !evalAs[bool](e, `(() => { const [x, y] = window.dgpviz.handle(0, 3); const r = document.querySelector('[data-testid="panel-layer-0"] canvas').getBoundingClientRect(); return x > r.left && x < r.right && y > r.top && y < r.bottom; })()`) {
		t.Error("an inducing point's handle is off its canvas at the presentation scale")
	}
	e.run(chromedp.Click(`[data-testid="font-larger"]`))
	e.waitFor("the larger scale in the URL", `location.search.includes("scale=1.5")`)
	e.run(chromedp.KeyEvent("]"))
	e.waitFor("four layers", `window.dgpviz.state.frame.layers.length === 4`)
	if off := visible(); off != "" {
		t.Errorf("four layers at 1280×720: not all on screen: %s", off)
	}
	e.run(chromedp.KeyEvent("["), chromedp.KeyEvent("["))
	e.waitFor("two layers", `window.dgpviz.state.frame.layers.length === 2`)
	e.run(chromedp.KeyEvent("]"))
	e.waitFor("three layers", `window.dgpviz.state.frame.layers.length === 3`)
	e.eval(`window.dgpviz.send({op: "step", n: 200})`, nil)
	e.waitFor("a fit", `window.dgpviz.state.frame.iter >= 200`)
	for _, sz := range [][2]int64{{1280, 720}, {1920, 1080}} {
		e.run(chromedp.EmulateViewport(sz[0], sz[1]))
		e.settle()
		if off := visible(); off != "" {
			t.Errorf("at %d×%d not all on screen: %s", sz[0], sz[1], off)
		}
		png, err := chromedp.Run(e.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(artifactDir(t), fmt.Sprintf("present-%dx%d.png", sz[0], sz[1]))
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
	}
	e.run(chromedp.KeyEvent("p"))
	e.waitFor("the normal page", `!document.body.classList.contains("present") && !location.search.includes("present=1")`)
	_ = kb.PageDown
	e.noErrors()
}
