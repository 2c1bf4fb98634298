package web

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// presentProblems returns what is wrong with presentation mode's screen
// now ("" when nothing): the page must be exactly the screen's height and
// width (no scrolling), every live panel on screen with a plot at least
// minPlot px tall, a legend inside it (at most three lines), and every
// title's main part whole.
const presentProblems = `((minPlot) => {
  const out = [], de = document.documentElement;
  if (de.scrollHeight > innerHeight + 1 || de.scrollWidth > innerWidth + 1) out.push("page " + de.scrollWidth + "×" + de.scrollHeight + " on a " + innerWidth + "×" + innerHeight + " screen");
  const show = document.body.dataset.show;
  const ids = show === "depth" ? ["panel-depth"] : show === "messages" ? ["panel-messages"] : show === "samples" ? ["panel-fit"] :
    ["panel-fit", "panel-bound", ...[...document.querySelectorAll("#layer-panels > section")].map((s) => s.id)];
  for (const id of ids) {
    const p = document.getElementById(id), r = p.getBoundingClientRect();
    if (r.bottom > innerHeight + 1 || r.right > innerWidth + 1 || r.top < 0) out.push(id + " off screen " + Math.round(r.top) + "–" + Math.round(r.bottom));
    const c = p.querySelector(".plot canvas, .mc-plot canvas"), cr = c && c.getBoundingClientRect();
    if (!cr || cr.height < minPlot) out.push(id + " plot " + (cr ? Math.round(cr.height) : 0) + " px tall");
    const lg = p.querySelector(".legend"), lr = lg && lg.getBoundingClientRect();
    if (!lg || !lg.children.length || lr.height < 8 || lr.bottom > r.bottom + 1) out.push(id + " has no legend in view");
    const t = p.querySelector("h2 .t-main") || p.querySelector("h2");
    if (t.scrollWidth > t.clientWidth + 1 && !p.querySelector("h2 .t-main")) out.push(id + " title cut: " + t.textContent);
    if (p.querySelector("h2 .t-main")) { const tm = p.querySelector("h2 .t-main").getBoundingClientRect(), h = p.querySelector("h2").getBoundingClientRect(); if (tm.right > h.right + 1) out.push(id + " title cut: " + t.textContent); }
  }
  return out.join("; ");
})`

// TestBrowserPresent: presentation mode fits the live session on exactly
// one screen — 1280×720, 1920×1080 and a projector's 1024×768, with 1 to 4
// layers — with legends and whole titles; "]" and "[" change the depth;
// the depth comparison, the message figure and the samples through the
// network are slides on keys 3, 4 and 2 (PageDown and PageUp go through
// them), each on the whole screen; the samples slide shows the slice
// beside the fit, which the marker moves; "p" leaves. Screenshots go to
// the artifact directory.
func TestBrowserPresent(t *testing.T) {
	e := newE2E(t)
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(e.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(artifactDir(t), name)
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
	}
	check := func(what string, minPlot int) {
		t.Helper()
		e.settle()
		if p := evalAs[string](e, fmt.Sprintf("%s(%d)", presentProblems, minPlot)); p != "" {
			t.Errorf("%s: %s", what, p)
		}
	}
	e.run(chromedp.EmulateViewport(1280, 720))
	e.run(chromedp.Navigate(e.base + "/?present=1&play=0&speed=0"))
	e.waitFor("a frame", `window.dgpviz && window.dgpviz.state.frame && window.dgpviz.state.frame.bound != null && window.dgpviz.handle(0, 3) !== null`)
	e.eval(`window.dgpviz.send({op: "step", n: 300})`, nil)
	e.waitFor("a fit", `window.dgpviz.state.frame.iter >= 300`)
	check("3 layers at 1280×720", 100)
	if evalAs[bool](e, `getComputedStyle(document.getElementById("controls")).display !== "none"`) {
		t.Error("the controls are shown in presentation mode")
	}
	// The handle of layer 1's point 4, in client pixels, is inside its canvas.
	if !evalAs[bool](e, `(() => { const [x, y] = window.dgpviz.handle(0, 3); const r = document.querySelector('[data-testid="panel-layer-0"] canvas').getBoundingClientRect(); return x > r.left && x < r.right && y > r.top && y < r.bottom; })()`) {
		t.Error("an inducing point's handle is off its canvas at the presentation scale")
	}
	for _, sz := range [][2]int64{{1920, 1080}, {1024, 768}, {1280, 720}} {
		e.run(chromedp.EmulateViewport(sz[0], sz[1]))
		check(fmt.Sprintf("3 layers at %d×%d", sz[0], sz[1]), 100)
		shot(fmt.Sprintf("present-%dx%d.png", sz[0], sz[1]))
	}
	e.run(chromedp.Click(`[data-testid="font-larger"]`))
	e.waitFor("the larger scale in the URL", `location.search.includes("scale=1.5")`)
	e.run(chromedp.KeyEvent("]"))
	e.waitFor("four layers", `window.dgpviz.state.frame.layers.length === 4 && !!document.querySelector('[data-testid="panel-layer-3"] .legend').children.length`)
	check("4 layers at 1280×720", 80)
	shot("present-1280x720-4-layers.png")
	e.run(chromedp.KeyEvent("["), chromedp.KeyEvent("["), chromedp.KeyEvent("["))
	e.waitFor("one layer", `window.dgpviz.state.frame.layers.length === 1 && !document.querySelector('[data-testid="panel-layer-1"]')`)
	check("1 layer at 1280×720", 200)
	shot("present-1280x720-1-layer.png")
	e.run(chromedp.KeyEvent("]"), chromedp.KeyEvent("]"))
	e.waitFor("three layers", `window.dgpviz.state.frame.layers.length === 3`)
	e.eval(`window.dgpviz.send({op: "step", n: 300})`, nil)
	e.waitFor("a fit", `window.dgpviz.state.frame.iter >= 300`)

	// Slides.
	e.eval(`document.activeElement.blur(), true`, nil)
	e.run(chromedp.KeyEvent("4"))
	e.waitFor("the message figure", `document.body.dataset.show === "messages" && !!window.dgpviz.panels.messages.figure()`)
	check("the message figure slide", 300)
	shot("present-slide-messages.png")
	e.run(chromedp.KeyEvent("2"))
	e.waitFor("the samples' slice", `document.body.dataset.show === "samples" && !!window.dgpviz.panels.fit.slice()`)
	check("the samples slide", 300)
	at := evalAs[float64](e, `window.dgpviz.panels.fit.slice().x`)
	xy := evalAs[[]float64](e, `window.dgpviz.panels.fit.sliceClient()`)
	e.drag(xy[0], xy[1], -120, 0, false)
	e.waitFor("the slice moved", fmt.Sprintf(`window.dgpviz.state.show.at !== null && window.dgpviz.state.show.at < %v && window.dgpviz.panels.fit.slice().x < %v`, at, at))
	shot("present-slide-samples.png")
	e.run(chromedp.KeyEvent(kb.PageDown))
	// Its fits under way, or done: presentation mode starts them.
	e.waitFor("PageDown: the depth slide", `document.body.dataset.show === "depth" && (document.querySelector('[data-testid="compare"]').disabled || window.dgpviz.panels.depth.done())`)
	check("the depth slide", 300)
	e.run(chromedp.KeyEvent(kb.PageUp))
	e.waitFor("PageUp: the samples slide", `document.body.dataset.show === "samples"`)
	e.run(chromedp.KeyEvent("1"))
	e.waitFor("the live slide", `document.body.dataset.show === "live"`)
	check("back to the live slide", 100)
	e.run(chromedp.KeyEvent("p"))
	e.waitFor("the normal page", `!document.body.classList.contains("present") && !location.search.includes("present=1")`)
	e.noErrors()
}
