package web

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserMessageFigure opens the live message figure, checks that
// densities render, that presets change the readout the way the paper
// says (compression far from Z > well represented), that the captions
// under the responses give the penalties in nats, that dragging an input
// brings a new figure, that the download link works, and saves a
// screenshot of the panel.
func TestBrowserMessageFigure(t *testing.T) {
	e := newE2E(t)
	e.run(chromedp.Navigate(e.base + "/?play=1&speed=60"))
	e.waitFor("a trained model", `Number(document.getElementById("iteration").textContent) >= 80 || document.getElementById("status").textContent.startsWith("converged")`)
	e.run(chromedp.Click(`[data-testid="play"]`))
	e.waitFor("paused", `document.querySelector('[data-testid="play"]').getAttribute("aria-pressed") === "false"`)

	// Closed: no mc messages, nothing computed.
	if evalAs[bool](e, `!!window.dgpviz.panels.messages.figure()`) {
		t.Fatal("mc messages before the panel was opened")
	}
	e.run(chromedp.ScrollIntoView(`[data-testid="panel-messages"]`), chromedp.Click(`[data-testid="mc-toggle"]`))
	e.waitFor("a figure", `(() => { const m = window.dgpviz.panels.messages.figure(); return !!m && !m.error && m.inputs.length === 4 && !!document.querySelector('[data-testid="mc-comp-3"]'); })()`)
	e.settle()
	_, ink := e.canvas("#panel-messages canvas")
	if ink < 20000 {
		t.Fatalf("message figure canvas: only %v painted pixels", ink)
	}
	// Every response's caption gives its penalties in nats, as the table.
	captions := evalAs[[]string](e, `document.querySelector("#panel-messages canvas").drawn.labels.map(l => l.text).filter(s => /^prop/.test(s))`)
	if len(captions) != 4 {
		t.Errorf("%d penalty captions under the responses, want 4: %q", len(captions), captions)
	}
	for _, c := range captions {
		if !regexp.MustCompile(`^propagation \S+ nats · compression \S+ nats · W₁ \S+$`).MatchString(c) {
			t.Errorf("penalty caption %q, want propagation … nats · compression … nats · W₁ …", c)
		}
	}
	// On a projector's 1024 px they keep their unit and run into no label.
	e.run(chromedp.EmulateViewport(1024, 768))
	e.settle()
	for _, c := range evalAs[[]string](e, captionClash) {
		t.Errorf("at 1024×768: %s", c)
	}
	e.run(chromedp.EmulateViewport(1400, 1500))
	e.settle()

	maxComp := func() float64 {
		return evalAs[float64](e, `Math.max(...[0,1,2,3].map(k => Number(document.querySelector('[data-testid="mc-comp-' + k + '"]').textContent)))`)
	}
	preset := func(testid, name string) float64 {
		h0, _ := e.canvas("#panel-messages canvas")
		e.run(chromedp.Click(fmt.Sprintf(`[data-testid=%q]`, testid)))
		e.waitFor("preset "+name, fmt.Sprintf(`window.dgpviz.panels.messages.figure() && window.dgpviz.panels.messages.figure().preset === %q && document.querySelector('[data-testid="panel-messages"]').dataset.seq === String(window.dgpviz.panels.messages.figure().seq)`, name))
		e.settle()
		if h1, _ := e.canvas("#panel-messages canvas"); h1 == h0 {
			t.Errorf("preset %q: the canvas did not change", name)
		}
		return maxComp()
	}
	well := preset("mc-preset-well", "well represented")
	far := preset("mc-preset-far", "far from the inducing points")
	if !(far > well) {
		t.Errorf("largest compression: far %v, well represented %v", far, well)
	}
	preset("mc-preset-bend", "across a bend")
	props := evalAs[[]float64](e, `window.dgpviz.panels.messages.figure().inputs.map(r => r.propagation)`)
	preset("mc-preset-well", "well represented")
	wellProps := evalAs[[]float64](e, `window.dgpviz.panels.messages.figure().inputs.map(r => r.propagation)`)
	if maxOf(props) <= maxOf(wellProps) {
		t.Errorf("largest propagation: across a bend %v, well represented %v", props, wellProps)
	}

	// Drag input 0 to the right: a new figure for the new mean arrives.
	e.eval(`document.querySelector("#panel-messages canvas").scrollIntoView({block: "center"})`, nil)
	e.settle()
	xy := evalAs[[]float64](e, `window.dgpviz.panels.messages.inputClient(0)`)
	t.Logf("input 0 at %v (viewport %v)", xy, evalAs[[]float64](e, `[innerWidth, innerHeight]`))
	mean0 := evalAs[float64](e, `window.dgpviz.panels.messages.figure().inputs[0].mean`)
	seq0 := evalAs[float64](e, `window.dgpviz.panels.messages.figure().seq`)
	x, y := xy[0], xy[1]
	e.run(chromedp.MouseEvent(chromedp.MouseMoved, x, y), chromedp.MouseEvent(chromedp.MousePressed, x, y, chromedp.ButtonLeft))
	for k := 1; k <= 10; k++ {
		e.run(chromedp.MouseEvent(chromedp.MouseMoved, x+float64(6*k), y, chromedp.ButtonLeft))
		time.Sleep(15 * time.Millisecond)
	}
	e.run(chromedp.MouseEvent(chromedp.MouseReleased, x+60, y, chromedp.ButtonLeft))
	e.waitFor("a figure for the dragged input", fmt.Sprintf(`window.dgpviz.panels.messages.figure().seq > %v && window.dgpviz.panels.messages.figure().inputs[0].mean > %v + 1e-6 && Math.abs(window.dgpviz.panels.messages.figure().inputs[0].mean - window.dgpviz.panels.messages.inputs()[0].mean) < 1e-9`, seq0, mean0))

	// The figure follows the optimizer.
	it := evalAs[float64](e, `window.dgpviz.panels.messages.figure().iter`)
	e.run(chromedp.Click(`[data-testid="step"]`))
	e.waitFor("a figure of the next iteration", fmt.Sprintf(`window.dgpviz.panels.messages.figure().iter > %v`, it))

	// The panel's download menu serves the figure of this session, with
	// these inputs.
	e.run(chromedp.Click(`#panel-messages [data-testid="download"]`))
	e.waitFor("download links", `!!document.querySelector('[data-testid="download-menu"] [data-testid="download-svg"]')`)
	href := evalAs[string](e, `document.querySelector('[data-testid="download-menu"] [data-testid="download-svg"]').href`)
	if !strings.Contains(href, "/figure/messages.svg?") || !strings.Contains(href, "inputs=") || !strings.Contains(href, "pin=") {
		t.Errorf("the message figure's download link %q", href)
	}
	got := evalAs[string](e, `fetch(document.querySelector('[data-testid="download-menu"] [data-testid="download-svg"]').href).then(r => r.status + " " + r.headers.get("content-type")).catch(e => String(e))`)
	if got != "200 image/svg+xml" {
		t.Errorf("SVG download: %s", got)
	}
	// It names the layer as the page does, counted from 1: in the URL and
	// in the figure's title.
	label := evalAs[string](e, `document.querySelector('[data-testid="mc-layer"]').selectedOptions[0].textContent`)
	layer := evalAs[string](e, `new URL(document.querySelector('[data-testid="download-menu"] [data-testid="download-svg"]').href).searchParams.get("layer")`)
	svg := evalAs[string](e, `fetch(document.querySelector('[data-testid="download-menu"] [data-testid="download-svg"]').href).then(r => r.text())`)
	if label != "layer "+layer || !strings.Contains(svg, ">"+label+"<") {
		t.Errorf("the page's %q, the link's layer=%s: want the same layer, in the figure's title too", label, layer)
	}
	e.run(chromedp.KeyEvent(kb.Escape))

	e.eval(`document.querySelector("#panel-messages details.explain").open = true`, nil)
	e.settle()
	e.screenshot("dgpviz-messages.png", `[data-testid="panel-messages"]`)

	// Closing stops the figure.
	e.run(chromedp.Click(`[data-testid="mc-toggle"]`))
	e.waitFor("closed", `document.querySelector('[data-testid="mc-toggle"]').getAttribute("aria-pressed") === "false"`)
	e.noErrors()
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// captionClash lists the message figure's penalty captions that lack
// their unit, leave the canvas or run into another label.
const captionClash = `(() => {
  const c = document.querySelector("#panel-messages canvas"), L = c.drawn.labels, w = c.getBoundingClientRect().width, out = [];
  const over = (a, b) => Math.min(a.r, b.r) - Math.max(a.l, b.l) > 0.5 && Math.min(a.b, b.b) - Math.max(a.t, b.t) > 0.5;
  for (const a of L.filter((l) => /^prop/.test(l.text))) {
    if (!/ nats/.test(a.text)) out.push(JSON.stringify(a.text) + " has no unit");
    if (a.l < 0 || a.r > w) out.push(JSON.stringify(a.text) + " leaves the canvas");
    for (const b of L) if (b !== a && over(a, b)) out.push(JSON.stringify(a.text) + " runs into " + JSON.stringify(b.text));
  }
  return out;
})()`
