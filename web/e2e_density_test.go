package web

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserFitDensity: "samples through the network" on the fit panel
// asks the server for the deep GP's Monte Carlo predictive density and
// draws it (the canvas changes, the legend says what it is); unticking
// removes it; no request storm while paused (one density per model).
func TestBrowserFitDensity(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: not in the short tier")
	}
	e := newE2E(t)
	e.openPaused()
	e.eval(`window.dgpviz.send({op: "step", n: 300})`, nil)
	e.waitFor("a trained model", `window.dgpviz.state.frame.iter >= 300`)
	e.settle()
	before, _ := e.canvas(`[data-testid="panel-fit"] canvas`)
	e.run(chromedp.Click(`[data-testid="fit-density"]`))
	e.waitFor("the density", `document.querySelector('[data-testid="panel-fit"] .legend').textContent.includes("samples through every layer")`)
	e.settle()
	with, _ := e.canvas(`[data-testid="panel-fit"] canvas`)
	if with == before {
		t.Error("the fit panel looks the same with the density on")
	}
	// Paused, unchanged model: no more densities are asked for.
	sent := evalAs[float64](e, `window.dgpviz.state.frame.applied`)
	e.eval(`new Promise(r => setTimeout(() => r(true), 1500))`, nil)
	if now := evalAs[float64](e, `window.dgpviz.state.frame.applied`); now > sent {
		t.Errorf("paused, the page kept asking (last command %v → %v)", sent, now)
	}
	t.Logf("legend: %s", e.text(`[data-testid="panel-fit"] .legend`))
	for _, sz := range [][2]int64{{1280, 720}, {1920, 1080}} {
		e.run(chromedp.EmulateViewport(sz[0], sz[1]))
		e.eval(`document.querySelector('[data-testid="panel-fit"]').scrollIntoView({block: "start"}); new Promise(r => setTimeout(() => r(true), 300))`, nil)
		e.settle()
		png, err := chromedp.Run(e.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(artifactDir(t), fmt.Sprintf("fit-density-%dx%d.png", sz[0], sz[1]))
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
	}
	e.run(chromedp.Click(`[data-testid="fit-density"]`))
	e.settle()
	if off, _ := e.canvas(`[data-testid="panel-fit"] canvas`); off == with {
		t.Error("the density stayed after unticking")
	}
	e.noErrors()
}
