package web

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// presentOverlaps returns what leaves the screen or covers something else
// in presentation mode ("" when nothing): the top bar's title, buttons and
// readout cells and every label the plots draw (Plot.text, with the marks
// of Plot.mark: the area a penalty strip's bars can reach), each inside the screen — a label inside its canvas — and
// no two overlapping; no readout value, panel title or legend item cut.
const presentOverlaps = `(() => {
  const out = [], W = innerWidth, H = innerHeight;
  const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== "hidden"; };
  const name = (el) => el.dataset.testid || el.id || el.textContent.trim().slice(0, 30);
  const boxes = [];
  for (const el of document.querySelectorAll(".top h1, .top button, .top .readout > div")) {
    if (!shown(el)) continue;
    const r = el.getBoundingClientRect();
    boxes.push({ n: name(el), l: r.left, t: r.top, r: r.right, b: r.bottom });
  }
  for (const el of document.querySelectorAll(".top .readout dd, #panels h2")) {
    if (shown(el) && (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)) out.push("cut: " + JSON.stringify(el.textContent));
  }
  // A legend's items inside its legend and panel, which clip them.
  for (const it of document.querySelectorAll("#panels .panel .legend .item")) {
    if (!shown(it)) continue;
    const r = it.getBoundingClientRect(), lg = it.closest(".legend").getBoundingClientRect(), p = it.closest(".panel").getBoundingClientRect();
    if (r.bottom > Math.min(lg.bottom, p.bottom) + 1 || r.right > Math.min(lg.right, p.right) + 1) out.push("legend " + JSON.stringify(it.textContent) + " cut");
  }
  const over = (a, b) => Math.min(a.r, b.r) - Math.max(a.l, b.l) > 0.5 && Math.min(a.b, b.b) - Math.max(a.t, b.t) > 0.5;
  const marks = [];
  for (const c of document.querySelectorAll("#panels canvas")) {
    if (!shown(c) || !c.drawn) continue;
    const cr = c.getBoundingClientRect(), at = (b) => ({ l: cr.left + b.l, t: cr.top + b.t, r: cr.left + b.r, b: cr.top + b.b });
    for (const b of c.drawn.labels) {
      if (b.l < -1 || b.t < -1 || b.r > cr.width + 1 || b.b > cr.height + 1) out.push(JSON.stringify(b.text) + " leaves its canvas");
      boxes.push({ n: JSON.stringify(b.text), ...at(b) });
    }
    marks.push(...c.drawn.marks.map(at));
  }
  for (const [i, a] of boxes.entries()) {
    if (a.l < -1 || a.t < -1 || a.r > W + 1 || a.b > H + 1) out.push(a.n + " off screen at " + [a.l, a.t, a.r, a.b].map(Math.round).join(","));
    for (const b of boxes.slice(i + 1)) if (over(a, b)) out.push(a.n + " overlaps " + b.n);
    if (marks.some((m) => over(a, m))) out.push(a.n + " drawn where the bars reach");
  }
  return [...new Set(out)].join("; ");
})()`

// TestBrowserPresentFits: in presentation mode at 1280×720, 1920×1080 and
// a projector's 1024×768, with the status as it is and at its longest
// ("converged (function convergence)"), on every slide (live, depth,
// samples, the message figure), and at the larger type scale (A+) with
// three and four layers, no control or label leaves the screen or overlaps another, no
// title or readout is cut, and the penalty strips' "max … nats" is not
// drawn over their bars. Screenshots go to the artifact directory.
func TestBrowserPresentFits(t *testing.T) {
	e := newE2E(t)
	e.run(chromedp.EmulateViewport(1280, 720))
	// Presentation mode would start the depth fits as the data came (up
	// to 5000 iterations per restart: most of this test's CPU under the
	// race detector), so the page opens without it and compares with 60
	// iterations of its own first; presentation mode then starts no other.
	e.run(chromedp.Navigate(e.base + "/?play=0&speed=0"))
	e.waitFor("a frame", `window.dgpviz && window.dgpviz.state.frame && window.dgpviz.state.frame.bound != null`)
	e.eval(`window.dgpviz.send({op: "step", n: 300}) && window.dgpviz.send({op: "compare", n: 60})`, nil)
	e.waitForWithin(90*time.Second, "a fit", `window.dgpviz.state.frame.iter >= 300`)
	e.waitForWithin(3*time.Minute, "the depth comparison", `window.dgpviz.panels.depth.done()`)
	e.eval(`document.activeElement.blur(), true`, nil)
	e.run(chromedp.KeyEvent("p"))
	e.waitFor("presentation mode", `document.body.classList.contains("present") && location.search.includes("present=1")`)
	e.waitFor("the depth comparison's rows", `document.querySelectorAll('[data-testid^="depth-row-"]').length === 3 && !document.querySelector('[data-testid="depth-table"]').textContent.includes("iterations…")`)
	check := func(what string) {
		t.Helper()
		e.settle()
		if p := evalAs[string](e, presentOverlaps); p != "" {
			t.Errorf("%s: %s", what, p)
		}
	}
	ready := map[string]string{
		"live":     `true`,
		"depth":    `true`,
		"samples":  `!!window.dgpviz.panels.fit.slice()`,
		"messages": `!!window.dgpviz.panels.messages.figure()`,
	}
	for _, slide := range []string{"live", "depth", "samples", "messages"} {
		e.eval(fmt.Sprintf(`document.querySelector('[data-testid="show-%s"]').click(), true`, slide), nil)
		e.waitFor("the "+slide+" slide", fmt.Sprintf(`document.body.dataset.show === %q && %s`, slide, ready[slide]))
		for _, sz := range [][2]int64{{1280, 720}, {1920, 1080}, {1024, 768}} {
			for _, status := range []string{"", "converged (function convergence)"} {
				e.run(chromedp.EmulateViewport(sz[0], sz[1]))
				if status != "" {
					e.eval(fmt.Sprintf(`document.getElementById("status").textContent = %q, true`, status), nil)
				}
				what := fmt.Sprintf("%s slide at %d×%d, status %q", slide, sz[0], sz[1], evalAs[string](e, `document.getElementById("status").textContent`))
				check(what)
				if status != "" {
					e.screenshot(fmt.Sprintf("present-fits-%s-%dx%d.png", slide, sz[0], sz[1]), "")
				}
			}
		}
	}
	// The back row's type scale (A+), then four layers: the most panels
	// the live slide holds.
	e.eval(`document.querySelector('[data-testid="show-live"]').click(), true`, nil)
	e.run(chromedp.EmulateViewport(1280, 720)) // A+ is in the bar from 1200 px
	e.run(chromedp.Click(`[data-testid="font-larger"]`))
	e.waitFor("the larger scale in the URL", `location.search.includes("scale=1.5")`)
	for _, layers := range []int{3, 4} {
		if layers == 4 {
			e.eval(`document.activeElement.blur(), true`, nil)
			e.run(chromedp.KeyEvent("]"))
			e.waitFor("four layers", `window.dgpviz.state.frame.layers.length === 4 && !!document.querySelector('[data-testid="panel-layer-3"] .legend').children.length`)
		}
		for _, sz := range [][2]int64{{1280, 720}, {1920, 1080}, {1024, 768}} {
			e.run(chromedp.EmulateViewport(sz[0], sz[1]))
			e.eval(`document.getElementById("status").textContent = "converged (function convergence)", true`, nil)
			check(fmt.Sprintf("%d layers at %d×%d, type scale 1.5", layers, sz[0], sz[1]))
			e.screenshot(fmt.Sprintf("present-fits-%d-layers-scale-1.5-%dx%d.png", layers, sz[0], sz[1]), "")
		}
	}
	e.noErrors()
}
