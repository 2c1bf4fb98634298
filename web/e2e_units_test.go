package web

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/modelfile"
	"dgpviz/internal/stream"
	"dgpviz/internal/train"

	"github.com/chromedp/chromedp"
)

// TestBrowserUnits opens a CSV whose header names its units
// (examples/loop.csv: x_time [s], y_beacon… [dBm], truth_… [m]) in the
// explorer and checks that every card with a unit says dBm (the model's
// test RMSE, the mean baseline's and the one-layer GP's), as do the
// held-out sentence and the output view's title; the preset is named by
// its shape. Then a model whose third hidden dimension has collapsed is
// loaded, and its latent view says so. Screenshots at 1280×720, 1920×1080
// and 1024×768. A one-row CSV is refused with viz fit's words.
func TestBrowserUnits(t *testing.T) {
	exe := requireBrowser(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := admit.DefaultLimits()
	l.MaxSessionsPerClient = 0
	ds, err := dataset.Load("csv:" + filepath.Join("..", "examples", "loop.csv"))
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := presetServer(t, ds, l, stream.Options{Workers: 1, BaselineIters: 30, Logger: log})
	e := startE2E(t, exe, srv, log, 1280, 720)
	e.run(chromedp.Navigate(e.base + "/")) // fitting: frames bring the one-layer GP's error when it is fitted
	cards := `["rmse-model", "rmse-mean", "rmse-gp1"].map(id => document.querySelector('[data-testid="' + id + '"]').textContent)`
	e.waitForWithin(120*time.Second, "the explorer", `!document.getElementById("panel-explorer").hidden && document.querySelector('[data-testid="rmse-model"]').textContent !== "–"`)
	t.Logf("cards: %q", evalAs[[]string](e, cards))
	e.waitForWithin(120*time.Second, "the explorer's three error cards", cards+`.every(s => /^[0-9.]+ dBm$/.test(s))`)
	e.eval(`window.dgpviz.send({op: "pause"}), true`, nil)
	e.settle()
	got := evalAs[[]string](e, cards)
	t.Logf("cards: %q", got)
	if label := e.text(`[data-testid="rmse-model-label"]`); label != "test RMSE" {
		t.Errorf("the error card's label %q, want \"test RMSE\" (the unit is beside each number)", label)
	}
	if v := e.text(`[data-testid="rmse-verdict"]`); strings.Count(v, "dBm") != 3 {
		t.Errorf("the held-out sentence gives its errors without dBm: %q", v)
	}
	if about := e.text(`[data-testid="explorer-about"]`); !strings.Contains(about, `The preset for this shape: "1 input → 3 → 3 → outputs"`) || strings.Contains(about, "robot") {
		t.Errorf("the preset is not named by its shape alone: %q", about)
	}
	if title := e.text(`[data-testid="explorer-signals"] h3`); !strings.Contains(title, "dBm") {
		t.Errorf("the output view's title names no unit: %q", title)
	}
	for _, sz := range [][2]int64{{1280, 720}, {1920, 1080}, {1024, 768}} {
		e.run(chromedp.EmulateViewport(sz[0], sz[1]))
		e.settle()
		e.screenshot(fmt.Sprintf("units-explorer-%dx%d.png", sz[0], sz[1]), "")
	}

	// A one-row CSV through "Your CSV…": refused by the rule viz fit
	// follows (dataset.TooFewRows; TestFitOneRow), counted in words.
	one := filepath.Join(t.TempDir(), "one.csv")
	if err := os.WriteFile(one, []byte("x_time [s],y_a [dBm],y_b [dBm]\n0,-50,-60\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.uploadThroughDialog(one, "")
	e.waitFor("the one-row CSV refused", `document.getElementById("toast").textContent.includes("one.csv")`)
	if toast := e.text("#toast"); !strings.Contains(toast, "1 training row: a fit needs at least 2") {
		t.Errorf("the page's refusal of a one-row CSV: %q", toast)
	}

	// A model of the same data whose h1 dimension 3 has collapsed: its
	// q(u) means zeroed, so every row's mean is the same.
	m, err := train.Initialize(ds.X, ds.Y, train.InitConfig{Hidden: []int{3}, Inducing: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	qmu := m.Layers[0].QMu
	r, _ := qmu.Dims()
	for i := range r {
		qmu.Set(i, 2, 0)
	}
	var buf bytes.Buffer
	if err := modelfile.Write(&buf, &modelfile.File{Model: m, Info: modelfile.InfoOf(ds)}); err != nil {
		t.Fatal(err)
	}
	e.run(chromedp.Navigate(e.base + "/?play=0&resume=" + loadModel(t, e.base, buf.String())))
	title := `document.querySelector('[data-testid="explorer-latent-0"] h3').textContent`
	e.waitForWithin(60*time.Second, "the collapsed dimension marked", `!document.getElementById("panel-explorer").hidden && (`+title+`).includes("dimension 3 collapsed")`)
	e.settle()
	t.Logf("latent view: %q", evalAs[string](e, title))
	if title := e.text(`[data-testid="explorer-signals"] h3`); !strings.Contains(title, "dBm") {
		t.Errorf("the loaded model's output view names no dBm (%q): the model file's units are lost", title)
	}
	for _, sz := range [][2]int64{{1280, 720}, {1920, 1080}, {1024, 768}} {
		e.run(chromedp.EmulateViewport(sz[0], sz[1]))
		e.settle()
		e.screenshot(fmt.Sprintf("units-collapsed-%dx%d.png", sz[0], sz[1]), "")
	}
	e.noErrors()
}
