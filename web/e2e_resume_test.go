package web

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserResume: when the page's socket drops, the page reconnects
// and resumes its session: the iteration count and the bound carry on
// from where they were instead of starting again at iteration 0.
func TestBrowserResume(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: not in the short tier")
	}
	e := newE2E(t)
	e.run(chromedp.Navigate(e.base + "/?play=0&speed=0"))
	e.waitFor("a frame", `window.dgpviz && window.dgpviz.state.frame && window.dgpviz.state.frame.bound != null`)
	e.eval(`window.dgpviz.send({op: "step", n: 30})`, nil)
	e.waitFor("30 iterations", `window.dgpviz.state.frame.iter >= 30`)
	before := evalAs[float64](e, `window.dgpviz.state.frame.bound`)
	session := evalAs[float64](e, `window.dgpviz.state.session`)
	e.eval(`window.dgpviz.drop()`, nil)
	e.waitFor("a new socket", fmt.Sprintf(`window.dgpviz.state.session !== %v && window.dgpviz.state.connected`, session))
	e.waitFor("the resumed frame", `window.dgpviz.state.frame && window.dgpviz.state.frame.iter >= 30`)
	if got := evalAs[float64](e, `window.dgpviz.state.frame.bound`); got != before {
		t.Errorf("resumed with bound %v, want %v", got, before)
	}
	if n := e.iteration(); n < 30 {
		t.Errorf("the page shows iteration %d after resuming, want ≥ 30", n)
	}
	e.noErrors()
}
