package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserLesson: ?lesson=paper opens the paper's lesson on the live
// session, and its steps drive it — one layer for the first step, two for
// the second (PageDown, a clicker's key), the message figure at the bend,
// the samples through the network — while a follower in another tab sees
// the same step, the same slide and the presenter's figures, with legends
// that do not tell a follower to click; closing the lesson closes it for
// the follower too.
func TestBrowserLesson(t *testing.T) {
	e := newE2E(t)
	e.run(chromedp.Navigate(e.base + "/?lesson=paper&present=1&speed=0"))
	e.waitFor("the lesson's first step", `!document.querySelector('[data-testid="lesson"]').hidden && document.querySelector('[data-testid="lesson-title"]').textContent.includes("One GP layer") && window.dgpviz.state.frame && window.dgpviz.state.frame.layers.length === 1`)
	if !strings.Contains(e.textOf("lesson"), "step 1 of") {
		t.Errorf("the lesson bar: %q", e.textOf("lesson"))
	}
	// The step arrives fitted: the bound's history is one point, which the
	// chart draws (it was empty beside the bound the card showed).
	e.settle()
	if got := evalAs[[]float64](e, `(() => {
	  const c = document.querySelector('[data-testid="panel-bound"] canvas'), d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
	  let k = 0; // the likelihood's colour, #047857
	  for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - 4) < 10 && Math.abs(d[i + 1] - 120) < 10 && Math.abs(d[i + 2] - 87) < 10 && d[i + 3] > 200) k++;
	  return [window.dgpviz.state.history.length, k];
	})()`); got[0] == 1 && got[1] < 20 {
		t.Errorf("the bound chart of a one-point history drew %v pixels of the likelihood's colour: the point is missing", got[1])
	}
	key := evalAs[string](e, `window.dgpviz.state.shareKey`)

	tab, cancel := chromedp.NewContext(e.ctx)
	defer cancel()
	f := &e2e{t: t, ctx: tab, base: e.base, srv: e.srv}
	f.run(chromedp.EmulateViewport(1024, 768), chromedp.Navigate(e.base+"/?follow="+key))
	f.waitFor("the follower on step 1", `window.dgpviz && window.dgpviz.state.follower && !document.querySelector('[data-testid="lesson"]').hidden && document.querySelector('[data-testid="lesson-title"]').textContent.includes("One GP layer") && document.body.classList.contains("present")`)
	f.waitFor("the follower's fit", `!!document.querySelector("#panel-fit .legend").children.length`)
	if lg := f.textOf("panel-fit"); strings.Contains(lg, "click to add") {
		t.Errorf("a follower's fit legend tells them to click: %q", lg)
	}

	e.eval(`document.activeElement.blur(), true`, nil)
	e.run(chromedp.KeyEvent(kb.PageDown))
	e.waitFor("step 2: two layers, the lesson in the URL", `document.querySelector('[data-testid="lesson-title"]').textContent.includes("Add a layer") && window.dgpviz.state.frame.layers.length === 2 && location.search.includes("hidden=1&") && location.search.includes("lesson=paper")`)
	f.waitFor("the follower on step 2", `document.querySelector('[data-testid="lesson-title"]').textContent.includes("Add a layer") && window.dgpviz.state.frame.layers.length === 2`)

	// Step 3 (three layers), then on to the message figure at the bend.
	e.run(chromedp.KeyEvent(kb.PageDown))
	e.waitFor("step 3: three layers", `window.dgpviz.state.frame.layers.length === 3`)
	e.eval(`window.dgpviz.lesson.go(3), true`, nil) // step 6: past the depth comparison, which would take the CPU
	e.waitFor("step 6: the message figure", `document.querySelector('[data-testid="lesson-title"]').textContent.includes("message figure") && document.body.dataset.show === "messages" && !!window.dgpviz.panels.messages.figure() && window.dgpviz.panels.messages.figure().preset === "across a bend"`)
	f.waitFor("the follower's message figure", `document.body.dataset.show === "messages" && !!window.dgpviz.panels.messages.figure() && window.dgpviz.panels.messages.figure().preset === "across a bend"`)
	f.screenshot("lesson-follower-messages-1024x768.png", "")

	e.run(chromedp.KeyEvent(kb.PageDown))
	e.waitFor("step 7: the samples", `document.body.dataset.show === "samples" && !!window.dgpviz.panels.fit.slice()`)
	f.waitFor("the follower's samples", `document.body.dataset.show === "samples" && !!window.dgpviz.panels.fit.slice()`)
	e.screenshot("lesson-samples.png", "")

	e.run(chromedp.Click(`[data-testid="lesson-close"]`))
	e.waitFor("the lesson closed", `document.querySelector('[data-testid="lesson"]').hidden && document.body.dataset.show === "live" && !location.search.includes("lesson=")`)
	f.waitFor("the follower's lesson closed", `document.querySelector('[data-testid="lesson"]').hidden && document.body.dataset.show === "live"`)
	e.noErrors()
	f.noErrors()
}
