package web

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"
)

// TestBrowserLectureRepairAndWatching: what a lecturer in front of a class
// needs of presentation mode, at 1280×720, 1920×1080 and 1024×768: the
// depth slide's fits start when presentation mode opens (not on the
// slide's first visit); with "watch the repair" an edit is repaired at
// the chosen speed (no frame says fast) and the readout keeps clear of
// the edited plot's axis labels; "watching" shows a follower at once and
// drops it at once when it leaves; the help's keys are in a font with
// arrows and a tailed l. Screenshots at each size go to the artifact
// directory.
func TestBrowserLectureRepairAndWatching(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: not in the short tier")
	}
	e := newE2E(t)
	e.run(chromedp.EmulateViewport(1280, 720))
	e.run(chromedp.Navigate(e.base + "/?present=1&play=0&speed=20"))
	e.waitFor("a frame", `window.dgpviz && window.dgpviz.state.frame && window.dgpviz.state.frame.bound != null && window.dgpviz.handle(2, 3) !== null`)
	// The depth comparison starts on the live slide, before its slide is
	// shown (its fits take 10 s, and much longer under the race detector).
	e.waitFor("the depth fits, started by presentation mode", `document.body.dataset.show === "live" && (document.querySelector('[data-testid="compare"]').disabled || window.dgpviz.panels.depth.done())`)

	e.eval(`window.dgpviz.send({op: "step", n: 300})`, nil)
	e.waitFor("a fit", `window.dgpviz.state.frame.iter >= 300`)
	e.eval(`window.dgpviz.send({op: "speed", watch_repair: true}); window.dgpviz.send({op: "play"})`, nil)
	e.waitFor("watch the repair on", `window.dgpviz.state.config && window.dgpviz.state.config.watch_repair === true`)

	// A follower, by websocket: "watching 1" at once, also on a projector.
	key := evalAs[string](e, `window.dgpviz.state.shareKey`)
	f, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(e.base, "http")+"/ws?follow="+key, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			if _, _, err := f.ReadMessage(); err != nil {
				return
			}
		}
	}()
	const watching = `document.getElementById("followers").textContent === "%d" && !!document.getElementById("followers-box").offsetParent`
	e.waitFor("watching 1", fmt.Sprintf(watching, 1))

	for k, sz := range [][2]int64{{1280, 720}, {1920, 1080}, {1024, 768}} {
		e.run(chromedp.EmulateViewport(sz[0], sz[1]))
		e.settle()
		e.waitFor(fmt.Sprintf("watching shown at %d×%d", sz[0], sz[1]), fmt.Sprintf(watching, 1))
		// Pull an inducing point of the last layer, as the lesson asks.
		it0 := evalAs[float64](e, `window.dgpviz.state.frame.iter`)
		e.eval(fmt.Sprintf(`(() => { const L = window.dgpviz.state.frame.layers[2]; window.dgpviz.send({op: "move", layer: 2, index: 3, mu: [L.u_mean[3] + %v]}); return true })()`, []float64{0.8, -0.8, 0.6}[k]), nil)
		e.waitFor("the edit's readout", `(() => { const c = document.querySelector('[data-testid="edit-readout"]'); return !!c && !c.hidden && !!window.dgpviz.state.frame.edit && window.dgpviz.state.frame.running })()`)
		start := time.Now()
		fast := false
		for time.Since(start) < time.Second {
			fast = fast || evalAs[bool](e, `!!(window.dgpviz.state.frame.running && window.dgpviz.state.frame.optimizer && window.dgpviz.state.frame.optimizer.fast)`)
			time.Sleep(100 * time.Millisecond)
		}
		its := evalAs[float64](e, `window.dgpviz.state.frame.iter`) - it0
		secs := time.Since(start).Seconds()
		t.Logf("%d×%d: the repair ran %v iterations in %.1f s (speed 20)", sz[0], sz[1], its, secs)
		if fast || its > 20*secs+10 {
			t.Errorf("%d×%d: a watched repair ran fast (%v iterations in %.1f s, fast %v)", sz[0], sz[1], its, secs, fast)
		}
		// The readout is clear of its plot's axis labels: right of the
		// left margin, above the bottom one (at the type scale).
		var clear string
		e.eval(`(() => {
			const c = document.querySelector('[data-testid="edit-readout"]'), p = c.parentElement, r = c.getBoundingClientRect(), pr = p.getBoundingClientRect();
			const k = window.dgpviz.drawScale ? window.dgpviz.drawScale() : 1;
			const out = [];
			if (r.left < pr.left + 56 * k) out.push("over the y axis's labels: " + Math.round(r.left - pr.left) + " px from the plot's left, the margin " + Math.round(56 * k));
			if (r.bottom > pr.bottom - 36 * k) out.push("over the x axis's labels");
			return out.join("; ");
		})()`, &clear)
		if clear != "" {
			t.Errorf("%d×%d: the edit readout is %s", sz[0], sz[1], clear)
		}
		e.screenshot(fmt.Sprintf("lecture-repair-%dx%d.png", sz[0], sz[1]), "")
	}
	f.Close()
	e.waitFor("watching 0 once the follower left", `document.getElementById("followers").textContent === "0"`)

	// The readout's numbers: a change shown is never 0, and before → after
	// never the same number twice (it read "Δ bound 0 nats −0.7551 → −0.7556").
	var digits []string
	e.eval(`import("/static/editreadout.js").then((m) => [m.signed(-4.9e-4), m.signed(0), ...m.pair(-0.75512, -0.75561), ...m.pair(-0.7551234, -0.7551239)])`, &digits)
	t.Logf("readout numbers: %q", digits)
	if digits[0] == "0" || digits[1] != "0" || digits[2] == digits[3] || digits[4] == digits[5] {
		t.Errorf("the readout writes %q", digits)
	}

	// The help's keys.
	e.eval(`document.getElementById("help-open").click(); true`, nil)
	e.waitFor("the help", `!document.querySelector('[data-testid="help"]').hidden`)
	if ff := evalAs[string](e, `getComputedStyle(document.querySelector('#help kbd')).fontFamily`); !strings.HasPrefix(ff, `"DejaVu Sans Mono"`) {
		t.Errorf("the help's keys are in %s, want a monospace font with arrows and a tailed l first", ff)
	}
	e.screenshot("lecture-help-1024x768.png", `[data-testid="help"]`)
	e.noErrors()
}
