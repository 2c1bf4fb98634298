package web

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/stream"
	"dgpviz/internal/train"

	"github.com/chromedp/chromedp"
)

// TestBrowserStochasticReadout opens a walk of 20,000 rows with the
// default optimizer: the session fits by SVI, the menu says so with the
// learning rate enabled, and the readout says what its numbers are — the
// bound on every row at the last check, the steps' minibatch estimate and
// the epochs — so that no estimate reads as the bound. Screenshots of the
// readout at 1280 × 720 and 1024 × 768.
func TestBrowserStochasticReadout(t *testing.T) {
	exe := requireBrowser(t)
	ds := walkDataset(20_000)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := admit.DefaultLimits()
	l.MaxRows = 20_000
	l.SessionMemory, l.ServerMemory = 0, 0 // not what is tested here
	srv, def := presetServer(t, ds, l, stream.Options{Workers: 2, BaselineIters: 10, Logger: log})
	if def.Method != (train.LBFGS{}) {
		t.Fatalf("the preset's method %v: want the default L-BFGS, which large data replace by SVI", def.Method)
	}
	e := startE2E(t, exe, srv, log, 1280, 720)
	t0 := time.Now()
	e.run(chromedp.Navigate(e.base + "/?data=" + ds.Name + "&play=1&speed=0"))
	// a frame past the first check, with an estimate since
	e.waitForWithin(120*time.Second, "a stochastic frame between checks", `(() => { const f = window.dgpviz?.state.frame; return !!f && f.optimizer.stochastic && f.bound_iter > 0 && f.optimizer.estimate != null; })()`)
	t.Logf("a frame after the first check %v after opening the page", time.Since(t0).Round(time.Millisecond))
	e.settle()
	if m := evalAs[string](e, `document.getElementById("optimizer").value`); m != "svi" {
		t.Errorf("the optimizer menu shows %q: want svi", m)
	}
	if evalAs[bool](e, `document.getElementById("learning-rate").disabled`) {
		t.Error("the learning rate is disabled for svi, whose Adam steps take it")
	}
	label, value := evalAs[string](e, `document.getElementById("bound-label").textContent`), e.textOf("bound-value")
	if label != "bound, full data (nats)" || value == "–" {
		t.Errorf("bound readout %q: %q, want the full data's bound", label, value)
	}
	stoLabel := evalAs[string](e, `document.querySelector("#stochastic-box dt").textContent`)
	if sto := e.textOf("stochastic"); stoLabel != "estimate · epochs" || !strings.Contains(sto, " · ") || evalAs[bool](e, `document.getElementById("stochastic-box").hidden`) {
		t.Errorf("stochastic readout %q: %q; want the estimate, so marked, and the epochs", stoLabel, sto)
	}
	// the history holds the checks only
	if h := evalAs[[]float64](e, `window.dgpviz.state.history.map(p => p.iter)`); len(h) == 0 {
		t.Error("no bound history")
	} else {
		every := train.TrainerConfig{Method: train.SVI{}, BatchSize: train.DefaultStochasticBatch, Window: train.DefaultWindow}.CheckEvery(ds.X.RawMatrix().Rows)
		for _, it := range h {
			if int(it)%every != 0 {
				t.Errorf("bound history at iterations %v: want the checks', every %d", h, every)
				break
			}
		}
	}
	for _, sz := range [][2]int64{{1280, 720}, {1024, 768}} {
		e.run(chromedp.EmulateViewport(sz[0], sz[1]))
		e.settle()
		e.screenshot(fmt.Sprintf("stochastic-readout-%dx%d.png", sz[0], sz[1]), `.readout`)
		e.screenshot(fmt.Sprintf("stochastic-page-%dx%d.png", sz[0], sz[1]), "")
	}
	e.noErrors()
}
