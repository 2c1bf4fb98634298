package web

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserSteering is issue #10's browser test: on the converged demo a
// 40 px drag of an inducing point, a double-click add and a data point
// added in the fit panel keep the displayed bound within 20 nats, the
// optimizer recovers, and Ctrl+Z restores the bound exactly.
func TestBrowserSteering(t *testing.T) {
	e := newE2E(t)
	bound := func() float64 { return evalAs[float64](e, `window.dgpviz.state.frame.bound`) }
	converge := func() float64 {
		t.Helper()
		e.run(chromedp.Click(`[data-testid="play"]`))
		// Converged, or the bound stable to 0.01 nats over 100 iterations.
		e.eval(`new Promise((resolve) => {
		  let best = -Infinity, at = 0;
		  const tick = () => {
		    const f = window.dgpviz.state.frame;
		    if (f && f.bound > best + 0.01) { best = f.bound; at = f.iter; }
		    if (f && (f.optimizer.converged || f.iter - at > 100)) return resolve(true);
		    setTimeout(tick, 50);
		  };
		  tick();
		})`, nil)
		// Paused by a person, not only stopped by the rule: an edit sets a
		// stopped fit going again (carryOn), and the exact-bound checks
		// after undo and redo need the model to stay as the edit left it.
		// The command, not the play button: the button toggles, and the
		// rule may stop the fit between reading its state and the click.
		e.eval(`window.dgpviz.send({ op: "pause" }), true`, nil)
		e.waitFor("paused", `window.dgpviz.state.frame.running === false && window.dgpviz.state.frame.paused === true`)
		e.settle()
		return bound()
	}
	e.run(chromedp.Navigate(e.base + "/?play=0&speed=0"))
	e.waitFor("handles", `window.dgpviz && window.dgpviz.handle(0, 5) !== null && window.dgpviz.state.frame.bound != null`)
	start := time.Now()
	b0 := converge()
	t.Logf("converged demo: bound %.4f after %v", b0, time.Since(start).Round(time.Millisecond))

	// A 40 px sideways drag of layer 1's point 6.
	xy := evalAs[[]float64](e, `window.dgpviz.handle(0, 5)`)
	x, y := xy[0], xy[1]
	z0 := evalAs[float64](e, `window.dgpviz.state.frame.layers[0].z[5]`)
	e.run(chromedp.MouseEvent(chromedp.MouseMoved, x, y), chromedp.MouseEvent(chromedp.MousePressed, x, y, chromedp.ButtonLeft))
	for k := 1; k <= 8; k++ {
		e.run(chromedp.MouseEvent(chromedp.MouseMoved, x+float64(5*k), y, chromedp.ButtonLeft))
		time.Sleep(20 * time.Millisecond)
	}
	e.run(chromedp.MouseEvent(chromedp.MouseReleased, x+40, y, chromedp.ButtonLeft))
	e.waitFor("the moved point", fmt.Sprintf(`window.dgpviz.state.frame.layers[0].z[5] > %v && !document.getElementById("undo").disabled && window.dgpviz.state.frame.running === false`, z0))
	e.settle()
	b1 := bound()
	t.Logf("40 px drag: Δbound %+.3f nats", b1-b0)
	if b0-b1 > 20 {
		t.Errorf("a 40 px drag dropped the bound from %.3f to %.3f", b0, b1)
	}
	// Ctrl+Z restores it exactly.
	e.eval(`document.activeElement.blur(), true`, nil)
	e.run(chromedp.KeyEvent("z", chromedp.KeyModifiers(2))) // 2: Ctrl
	e.waitFor("undo", fmt.Sprintf(`window.dgpviz.state.frame.bound === %v`, b0))
	// Redo, then the optimizer recovers.
	e.run(chromedp.Click(`[data-testid="redo"]`))
	e.waitFor("redo", fmt.Sprintf(`window.dgpviz.state.frame.bound === %v`, b1))
	if b2 := converge(); b2 < b0-1 {
		t.Errorf("after the drag the optimizer got back to %.3f, more than 1 nat below %.3f", b2, b0)
	}
	b0 = bound()

	// Double-click adds a point at the posterior: the bound barely moves.
	m := evalAs[float64](e, `window.dgpviz.state.frame.layers[1].m`)
	spot := evalAs[[]float64](e, `(() => {
	  const r = document.querySelector("#panel-layer-1 canvas").getBoundingClientRect();
	  const hs = [...Array(window.dgpviz.state.frame.layers[1].m).keys()].map(k => window.dgpviz.handle(1, k));
	  for (let fx = 0.3; fx < 0.9; fx += 0.05) {
	    const x = r.left + fx * r.width, y = r.top + 0.3 * r.height;
	    if (hs.every(([hx, hy]) => Math.hypot(hx - x, hy - y) > 25)) return [x, y];
	  }
	  return [];
	})()`)
	if len(spot) != 2 {
		t.Fatal("no free spot in layer 2's panel")
	}
	e.run(chromedp.MouseClickXY(spot[0], spot[1], chromedp.ClickCount(2)))
	e.waitFor("an added point", fmt.Sprintf(`window.dgpviz.state.frame.layers[1].m === %v`, m+1))
	e.settle()
	if b := bound(); math.Abs(b-b0) > 20 {
		t.Errorf("double-click add moved the bound from %.3f to %.3f", b0, b)
	}
	e.run(chromedp.Click(`[data-testid="undo"]`))
	e.waitFor("undo of the add", fmt.Sprintf(`window.dgpviz.state.frame.layers[1].m === %v && window.dgpviz.state.frame.bound === %v`, m, b0))

	// Click in the fit panel: a data point appears in the next frame.
	n := evalAs[float64](e, `window.dgpviz.state.setup.n`)
	fit := evalAs[[]float64](e, `(() => { const r = document.querySelector("#panel-fit canvas").getBoundingClientRect(); return [r.left + 0.3 * r.width, r.top + 0.2 * r.height]; })()`)
	e.run(chromedp.MouseClickXY(fit[0], fit[1]))
	e.waitFor("a new data point", fmt.Sprintf(`window.dgpviz.state.setup.n === %v && window.dgpviz.state.frame !== null && window.dgpviz.state.frame.n === %v`, n+1, n+1))
	e.waitFor("reset data shown", `!document.querySelector('[data-testid="reset-data"]').hidden`)
	e.run(chromedp.Click(`[data-testid="reset-data"]`))
	e.waitFor("the original data", fmt.Sprintf(`window.dgpviz.state.setup.n === %v && window.dgpviz.state.setup.edited === false`, n))

	// "Save model" downloads the session's model.
	if href := evalAs[string](e, `document.querySelector('[data-testid="save-model"]').href`); !strings.Contains(href, "/model.json?session=") {
		t.Errorf("save-model link %q", href)
	}

	// Look at it: the Δ readout during a pull.
	xy = evalAs[[]float64](e, `window.dgpviz.handle(2, 4)`)
	x, y = xy[0], xy[1]
	e.run(chromedp.MouseEvent(chromedp.MouseMoved, x, y), chromedp.MouseEvent(chromedp.MousePressed, x, y, chromedp.ButtonLeft))
	for k := 1; k <= 6; k++ {
		e.run(chromedp.MouseEvent(chromedp.MouseMoved, x, y-float64(5*k), chromedp.ButtonLeft))
		time.Sleep(20 * time.Millisecond)
	}
	e.waitFor("the edit's readout", `[...document.querySelectorAll('[data-testid="edit-readout"]')].some(el => !el.hidden && el.textContent.includes("layer 3"))`)
	e.settle()
	e.screenshot("dgpviz-steering.png", "")
	e.run(chromedp.MouseEvent(chromedp.MouseReleased, x, y-30, chromedp.ButtonLeft))
	e.noErrors()
}
