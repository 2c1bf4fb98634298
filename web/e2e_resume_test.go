package web

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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
	e.openPaused()
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

// TestBrowserLoadModel: a model saved from one session and loaded with the
// page's "Load model" replaces the session's model: the page shows its
// bound to the last digit, its iteration and its own data set.
func TestBrowserLoadModel(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: not in the short tier")
	}
	e := newE2E(t)
	e.openPaused()
	e.eval(`window.dgpviz.send({op: "step", n: 40})`, nil)
	e.waitFor("40 iterations", `window.dgpviz.state.frame.iter >= 40`)
	saved := evalAs[float64](e, `window.dgpviz.state.frame.bound`)
	key := evalAs[string](e, `window.dgpviz.state.figureKey`)
	resp, err := http.Get(e.base + "/model.json?session=" + key)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	path := filepath.Join(t.TempDir(), "saved-model.json")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	// Train on, then load the saved model back.
	e.eval(`window.dgpviz.send({op: "step", n: 20})`, nil)
	e.waitFor("60 iterations", `window.dgpviz.state.frame.iter >= 60`)
	e.run(chromedp.SetUploadFiles(`[data-testid="load-model"]`, []string{path}))
	e.waitFor("the loaded model", `window.dgpviz.state.config && window.dgpviz.state.config.dataset.startsWith("model-") && window.dgpviz.state.frame && window.dgpviz.state.frame.iter === 0`)
	e.settle()
	if got := evalAs[float64](e, `window.dgpviz.state.frame.bound`); got != saved {
		t.Errorf("the loaded model's bound %v, the saved one's %v", got, saved)
	}
	if label := e.text(`[data-testid="dataset"] option:checked`); !strings.Contains(label, "loaded model") {
		t.Errorf("the data menu shows %q", label)
	}
	e.screenshot("load-model", "")
	e.noErrors()
}

// TestBrowserUploadData: "Your CSV…" puts the page on the uploaded data:
// the data menu names it and the fit panel shows its points.
func TestBrowserUploadData(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: not in the short tier")
	}
	e := newE2E(t)
	e.openPaused()
	path := filepath.Join(t.TempDir(), "bumps.csv")
	csv := "x,y\n"
	for i := range 25 {
		x := float64(i) / 24
		csv += fmt.Sprintf("%g,%g\n", x, math.Sin(6*x))
	}
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	e.run(chromedp.SetUploadFiles(`[data-testid="upload-data"]`, []string{path}))
	e.waitFor("the uploaded data", `window.dgpviz.state.config && window.dgpviz.state.config.dataset.startsWith("data-") && window.dgpviz.state.setup && window.dgpviz.state.setup.n === 25`)
	if label := e.text(`[data-testid="dataset"] option:checked`); !strings.Contains(label, "bumps.csv (25×1)") {
		t.Errorf("the data menu shows %q", label)
	}
	e.eval(`window.dgpviz.send({op: "step", n: 50})`, nil)
	e.waitFor("a fit", `window.dgpviz.state.frame.iter >= 50`)
	e.settle()
	e.screenshot("upload-data", "")
	e.noErrors()
}
