package web

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserFitDensity: "samples through the network" on the fit panel
// asks the server for the deep GP's Monte Carlo predictive density and
// draws it (the canvas changes, the legend says what it is); unticking
// removes it; no request storm while paused (one density per model).
// Like the paper's step figure it spans x in [−1, 2], with sample paths,
// and the legend's count of bimodal inputs is the marks drawn: the
// paper's extrapolation is bimodal, so there are some.
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
	// 2000 samples at each of 300 inputs and 12 paths: 0.7 s, a minute
	// under the race detector on a busy machine.
	e.waitForWithin(2*time.Minute, "the density", `document.querySelector('[data-testid="panel-fit"] .legend').textContent.includes("samples through every layer")`)
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
	legendText := e.text(`[data-testid="panel-fit"] .legend`)
	t.Logf("legend: %s", legendText)
	type densityStats struct {
		X0, X1, Bimodal, Paths, Outside float64
	}
	got := evalAs[densityStats](e, `(() => {
		const d = window.dgpviz.panels.fit.density(), s = window.dgpviz.state.setup;
		const orig = (x) => s.norm_x.mean[0] + s.norm_x.scale[0] * x;
		let bimodal = 0, outside = 0;
		for (let i = 0; i < d.g; i++) if (d.modes[i] >= 2) { bimodal++; if (orig(d.x[i]) < 0 || orig(d.x[i]) > 1) outside++; }
		return {X0: orig(d.x[0]), X1: orig(d.x[d.g - 1]), Bimodal: bimodal, Paths: d.p, Outside: outside};
	})()`)
	t.Logf("density over x in [%.3f, %.3f]: %v inputs with two or more modes (%v beyond the data), %v paths", got.X0, got.X1, got.Bimodal, got.Outside, got.Paths)
	if math.Abs(got.X0+1) > 1e-3 || math.Abs(got.X1-2) > 1e-3 {
		t.Errorf("the density spans x in [%.3f, %.3f], want the paper's [−1, 2]", got.X0, got.X1)
	}
	if got.Paths < 1 || !strings.Contains(legendText, "paths") {
		t.Errorf("%v sample paths; legend %q", got.Paths, legendText)
	}
	if want := fmt.Sprintf("≥ 2 modes (%d)", int(got.Bimodal)); !strings.Contains(legendText, want) {
		t.Errorf("legend %q does not say %q, the marks drawn", legendText, want)
	}
	if got.Outside == 0 {
		t.Error("no bimodal input beyond the data: the paper's extrapolation is bimodal")
	}
	for _, sz := range [][2]int64{{1280, 720}, {1920, 1080}, {1024, 768}} {
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
