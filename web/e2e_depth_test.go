package web

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserDepth: "Compare 1, 2, 3 layers" fits the three depths (here
// with 300 iterations per restart, to keep the test short), draws them side
// by side and fills the table with their bounds and rise widths.
func TestBrowserDepth(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: not in the short tier")
	}
	e := newE2E(t)
	e.openPaused()
	// Before a comparison the panel is a line of text, not an empty plot.
	const plotHeight = `document.querySelector('[data-testid="panel-depth"] .plot').getBoundingClientRect().height`
	if h := evalAs[float64](e, plotHeight); h > 60 {
		t.Errorf("before a comparison the depth panel's plot is %v px high, want a line of text (≤ 60)", h)
	}
	e.eval(`window.dgpviz.send({op: "compare", n: 300})`, nil)
	e.waitFor("progress", `document.querySelector('[data-testid="depth-table"]').textContent.includes("iterations…")`)
	e.eval(`new Promise((resolve) => { const t = () => document.querySelectorAll('[data-testid^="depth-row-"]').length === 3 && !document.querySelector('[data-testid="depth-table"]').textContent.includes("iterations…") ? resolve(true) : setTimeout(t, 100); t(); })`, nil)
	e.settle()
	if h := evalAs[float64](e, plotHeight); h < 300 {
		t.Errorf("after the comparison the depth panel's plot is %v px high, want its full height (320)", h)
	}
	hash, ink := e.canvas(`[data-testid="panel-depth"] canvas`)
	if ink < 1000 {
		t.Errorf("the depth panel drew little (%v pixels, hash %v)", ink, hash)
	}
	for _, k := range []int{1, 2, 3} {
		row := e.text(fmt.Sprintf(`[data-testid="depth-row-%d"]`, k))
		t.Logf("%s", row)
		if row == "" {
			t.Errorf("no table row for %d layers", k)
		}
	}
	// One precision a column: every number in a column (the restarts'
	// bounds with the bound's) has the same decimals.
	cols := evalAs[[][]int](e, `(() => {
	  const rows = [...document.querySelectorAll('[data-testid^="depth-row-"]')].map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent.match(/-?[\d,]+(\.\d+)?/g) ?? []));
	  const dec = (s) => (s.split(".")[1] ?? "").length;
	  return [[0, 1], [2], [3], [5]].map((cs) => [...new Set(rows.flatMap((r) => cs.flatMap((c) => r[c].map(dec))))]);
	})()`)
	for i, name := range []string{"bounds", "rise width", "overshoot", "time"} {
		if len(cols[i]) > 1 {
			t.Errorf("the depth table's %s have %v decimals, want one precision", name, cols[i])
		}
	}
	// So has the bound's table of terms (KL, compression, propagation).
	terms := evalAs[[][]int](e, `(() => {
	  const rows = [...document.querySelectorAll('[data-testid="bound-terms"] tr')].slice(1).filter((tr) => !tr.classList.contains("sum")).map((tr) => [...tr.querySelectorAll("td")].slice(1).map((td) => (td.textContent.split(".")[1] ?? "").length));
	  return [0, 1, 2].map((j) => [...new Set(rows.map((r) => r[j]))]);
	})()`)
	for j, name := range []string{"KL", "compression", "propagation"} {
		if len(terms[j]) != 1 {
			t.Errorf("the bound's table's %s column has %v decimals, want one precision", name, terms[j])
		}
	}
	e.run(chromedp.EmulateViewport(1280, 720))
	e.eval(`document.querySelector('[data-testid="panel-depth"]').scrollIntoView({block: "start"}); new Promise(r => setTimeout(() => r(true), 300))`, nil)
	e.settle()
	png, err := chromedp.Run(e.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(artifactDir(t), "depth-1280x720.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	e.noErrors()
}
