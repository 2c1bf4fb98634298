package web

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/stream"

	"github.com/chromedp/chromedp"
)

// explorerLayout returns what a lecturer would flag in the latent
// explorer at the window's size ("" when nothing): a hidden layer's view
// narrower than minShare of the explorer's body; any label a view draws
// (Plot.text: ticks, titles, keys) outside its canvas, within 2 px of
// another label (tick labels run together), or over a mark (Plot.mark: a
// plot's own room, as the penalties' areas); a control of the explorer's
// tools out of its panel.
const explorerLayout = `((minShare) => {
  const out = [];
  const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const panel = document.getElementById("panel-explorer"), pr = panel.getBoundingClientRect();
  const body = panel.querySelector(".explorer-body").getBoundingClientRect();
  for (const v of panel.querySelectorAll('.rv.latent')) {
    const w = v.getBoundingClientRect().width;
    if (w < minShare * body.width) out.push(v.dataset.testid + " " + Math.round(w) + " px of the explorer's " + Math.round(body.width));
  }
  for (const el of panel.querySelectorAll(".panel-tools > *")) {
    if (!shown(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.right > pr.right + 1 || r.left < pr.left - 1) out.push(JSON.stringify(el.textContent.trim()) + " out of the panel");
  }
  const near = (a, b) => Math.min(a.r, b.r) - Math.max(a.l, b.l) > -2 && Math.min(a.b, b.b) - Math.max(a.t, b.t) > 0.5;
  const over = (a, b) => Math.min(a.r, b.r) - Math.max(a.l, b.l) > 0.5 && Math.min(a.b, b.b) - Math.max(a.t, b.t) > 0.5;
  let labels = 0;
  for (const c of panel.querySelectorAll("canvas")) {
    if (!shown(c) || !c.drawn) continue;
    const cr = c.getBoundingClientRect(), L = c.drawn.labels, id = c.dataset.testid;
    labels += L.length;
    for (const [i, a] of L.entries()) {
      if (a.l < -1 || a.t < -1 || a.r > cr.width + 1 || a.b > cr.height + 1) out.push(id + ": " + JSON.stringify(a.text) + " leaves its canvas");
      for (const b of L.slice(i + 1)) if (near(a, b)) out.push(id + ": " + JSON.stringify(a.text) + " runs into " + JSON.stringify(b.text));
      if (c.drawn.marks.some((m) => over(a, m))) out.push(id + ": " + JSON.stringify(a.text) + " drawn over the plot");
    }
  }
  if (labels < 20) out.push("only " + labels + " labels drawn");
  return [...new Set(out)].join("; ");
})`

// TestBrowserExplorerLayout: the latent explorer reads at a projector's
// 1024×768, at 1280×720 and at 1920×1080, on the page and in presentation
// mode: below 1400 px every hidden layer's view has the explorer's whole
// width (it had two thirds, each small plot 140 px, beside the ground
// truth), above it more than half; no tick label, title or key leaves its
// canvas, runs into another or covers a plot; the tools stay in their
// panel. On the small robot fixture (generated-size, with ground truth
// and a test split), so it needs no ../shared data.
func TestBrowserExplorerLayout(t *testing.T) {
	exe := requireBrowser(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := admit.DefaultLimits()
	cat, err := dataset.NewCatalog(nil, l.MaxRows)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.LoadRobot(filepath.Join("..", "internal", "dataset", "testdata", "robot_small.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Add(ds, l.MaxRows); err != nil {
		t.Fatal(err)
	}
	def := admit.DefaultConfig()
	def.Dataset = "robot"
	def = admit.PresetConfig(def, ds, l)
	srv, err := stream.NewServer(stream.Options{Catalog: cat, Limits: l, Defaults: def, Workers: 1, BaselineIters: 100, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	e := startE2E(t, exe, srv, log, 1024, 768)
	e.run(chromedp.Navigate(e.base + "/"))
	e.waitFor("the explorer", `window.dgpviz && window.dgpviz.panels.explorer && window.dgpviz.panels.explorer.stats.draws > 3 && !document.getElementById("panel-explorer").hidden`)
	e.waitFor("the held-out rows' analysis", `window.dgpviz.state.frame.view && window.dgpviz.state.frame.view.test_rmse != null`)
	e.eval(`window.dgpviz.send({op: "pause"}), true`, nil)
	e.waitFor("paused", `window.dgpviz.state.frame.running === false`)
	for _, present := range []bool{false, true} {
		if present {
			e.eval(`document.activeElement.blur(), true`, nil)
			e.run(chromedp.KeyEvent("p"))
			e.waitFor("presentation mode", `document.body.classList.contains("present")`)
		}
		for _, sz := range [][2]int64{{1024, 768}, {1280, 720}, {1920, 1080}} {
			e.run(chromedp.EmulateViewport(sz[0], sz[1]))
			e.settle()
			e.settle()
			share := 0.9
			if sz[0] > 1400 {
				share = 0.5
			}
			if p := evalAs[string](e, fmt.Sprintf("%s(%v)", explorerLayout, share)); p != "" {
				t.Errorf("%d×%d, presentation mode %v: %s", sz[0], sz[1], present, p)
			}
			if sz[0] == 1024 {
				e.screenshot(fmt.Sprintf("explorer-layout-present-%v-%dx%d.png", present, sz[0], sz[1]), `[data-testid="panel-explorer"]`)
			}
		}
	}
	e.noErrors()
}
