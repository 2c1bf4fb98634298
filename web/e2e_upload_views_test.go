package web

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/stream"

	"github.com/chromedp/chromedp"
)

// writeCSVFile writes ds by the CSV conventions (dataset.WriteCSV) into dir.
func writeCSVFile(t *testing.T, dir, name string, ds *dataset.Dataset) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := dataset.WriteCSV(f, ds); err != nil {
		t.Fatal(err)
	}
	return path
}

// uploadThroughDialog opens "Your CSV…", types the image shape (if any)
// and chooses the file, as a person does.
func (e *e2e) uploadThroughDialog(path, shape string) {
	e.t.Helper()
	e.run(chromedp.Click(`[data-testid="open-upload"]`))
	e.waitFor("the upload dialog", `document.querySelector('[data-testid="upload-dialog"]').open`)
	if text := e.text(`[data-testid="upload-dialog"]`); !strings.Contains(text, "truth") || !strings.Contains(text, "split") {
		e.t.Errorf("the upload dialog does not state the CSV conventions: %.300q", text)
	}
	// the row limit as people write it, and the flag that raises it
	if text := e.text(`[data-testid="upload-dialog"]`); !regexp.MustCompile(`At most \d{1,3}(,\d{3})* rows \(viz serve -max-rows raises it\)`).MatchString(text) {
		e.t.Errorf("the upload dialog does not state its row limit and the flag that raises it: %.600q", text)
	}
	if shape != "" {
		e.run(chromedp.SendKeys(`[data-testid="upload-shape"]`, shape))
	}
	e.run(chromedp.SetUploadFiles(`[data-testid="upload-data"]`, []string{path}))
}

// TestBrowserUploadChoosesView: a person's CSV opens the view its shape
// chooses. The robot data written as a CSV (time, the signals, the true
// path as truth_x and truth_y, the split) opens the latent explorer with
// the geometry scores of the robot reader's data for the same model; the
// Frey fixture written as a CSV of pixels with its image shape opens the
// autoencoder with image tiles.
func TestBrowserUploadChoosesView(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: not in the short tier")
	}
	exe := requireBrowser(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := admit.DefaultLimits()
	l.SessionMemory = 1 << 30 // the autoencoder preset on the fixture
	cat, err := dataset.NewCatalog(nil, l.MaxRows)
	if err != nil {
		t.Fatal(err)
	}
	robot := robotCatalogData(t)
	if err := cat.Add(robot, l.MaxRows); err != nil {
		t.Fatal(err)
	}
	def := admit.DefaultConfig()
	def.Play = false // the same model for both: the preset's restarts, not yet fitted further
	srv, err := stream.NewServer(stream.Options{Catalog: cat, Limits: l, Defaults: def, Workers: 1, BaselineIters: 50, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	e := startE2E(t, exe, srv, log, 1500, 1700)
	dir := t.TempDir()

	// The robot reader's data, in its preset, paused at the preset's model.
	e.run(chromedp.Navigate(e.base + "/?data=robot&hidden=3,3&m=15&seed=1&play=0"))
	scores := `[...document.querySelectorAll('[data-testid="score-1"], [data-testid="score-pca"], [data-testid="score-time"]')].map(d => d.textContent).join(" ")`
	ready := `!document.getElementById("panel-explorer").hidden && window.dgpviz.state.frame && window.dgpviz.state.frame.view && window.dgpviz.state.frame.view.scores && document.querySelector('[data-testid="score-1"]').textContent !== "–"`
	e.waitForWithin(120*time.Second, "the robot reader's explorer", ready)
	e.settle()
	want := evalAs[string](e, scores)

	// The same data as a person's CSV.
	e.uploadThroughDialog(writeCSVFile(t, dir, "robot.csv", robot), "")
	e.waitForWithin(120*time.Second, "the uploaded robot CSV in the explorer", `window.dgpviz.state.config.dataset.startsWith("data-") && `+ready)
	e.eval(`window.dgpviz.send({op: "pause"}), true`, nil)
	e.settle()
	got := evalAs[string](e, scores)
	t.Logf("geometry h₁, outputs' PCA, input alone: robot reader %q, uploaded CSV %q", want, got)
	if got != want {
		t.Errorf("the uploaded CSV's geometry readout %q, the robot reader's %q", got, want)
	}
	if about := e.text(`[data-testid="explorer-about"]`); !strings.Contains(about, "ground truth (truth_x, truth_y)") || !strings.Contains(about, "test split") {
		t.Errorf("the explorer does not say what the CSV carries: %q", about)
	}
	e.screenshot("upload-robot-csv", "")

	// The Frey fixture's pixels with their image shape: the autoencoder,
	// with image tiles.
	frey, err := dataset.LoadFrey(filepath.Join("..", "internal", "dataset", "testdata", "frey_small.mat"))
	if err != nil {
		t.Fatal(err)
	}
	e.uploadThroughDialog(writeCSVFile(t, dir, "faces.csv", frey), "28x20")
	e.waitFor("the autoencoder with image tiles", `!document.getElementById("panel-autoencoder").hidden && window.dgpviz.state.setup.view.height === 28 && Number(document.querySelector('[data-testid="autoencoder-map"]').dataset.tiles) > 0`)
	e.settle()
	e.screenshot("upload-faces-csv", "")
	e.noErrors()
}
