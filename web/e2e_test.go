package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/browsertest"
	"dgpviz/internal/dataset"
	"dgpviz/internal/stream"

	"github.com/chromedp/chromedp"
)

// artifactDir is where screenshots go: $DGPVIZ_ARTIFACTS or a folder in
// os.TempDir().
func artifactDir(t *testing.T) string {
	d := os.Getenv("DGPVIZ_ARTIFACTS")
	if d == "" {
		d = filepath.Join(os.TempDir(), "dgpviz-artifacts")
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

type e2e struct {
	t    *testing.T
	ctx  context.Context
	base string
	srv  *stream.Server
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	exe := requireBrowser(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// The browser's pages are one client (loopback): no per-client
	// session limit here.
	l := admit.DefaultLimits()
	l.MaxSessionsPerClient = 0
	srv, err := stream.NewServer(stream.Options{Limits: l, Defaults: admit.DefaultConfig(), Workers: 1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return startE2E(t, exe, srv, log, 1400, 1500)
}

// raceBrowserTests are the browser tests the race tier runs: the page's
// commands and a lost connection, and sessions that follow a presenter's.
// The others wait for fits, which the race detector slows several times
// over; they run without it in README's test command's second part, and
// the server code they drive runs under it in internal/stream's,
// internal/loadtest's and this package's other tests.
var raceBrowserTests = map[string]bool{"TestBrowser": true, "TestBrowserFollow": true, "TestBrowserFollowerMirrorsPresenter": true}

// requireBrowser returns Chromium's path, skipping the test when there is
// none — or failing it when CI is set, where a browser must be installed —
// and under the race detector unless raceBrowserTests has it.
func requireBrowser(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("browser tests are not in the short tier (-short)")
	}
	if raceEnabled && !raceBrowserTests[t.Name()] {
		t.Skip("a browser test that waits for fits: it runs without the race detector (go test -count=1 -run 'TestLessonClaims$|TestBrowser' ./web)")
	}
	exe := browsertest.Find()
	if exe == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no Chromium found and CI is set: install it (apt-get install chromium) or set CHROME_PATH")
		}
		t.Skip("no Chromium found (apt-get install chromium, or set CHROME_PATH); browser tests skipped")
	}
	return exe
}

// e2eTimeout bounds a browser test's whole run (a test of large data may
// set it higher before startE2E).
var e2eTimeout = 150 * time.Second

// presetServer returns a session server whose one data set is ds, opened
// with the preset its shape chooses, under limits l; o gives the rest
// (workers, baseline iterations, logger). It returns the defaults too.
func presetServer(t *testing.T, ds *dataset.Dataset, l admit.Limits, o stream.Options) (*stream.Server, admit.Config) {
	t.Helper()
	cat, err := dataset.NewCatalog(nil, l.MaxRows)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Add(ds, l.MaxRows); err != nil {
		t.Fatal(err)
	}
	def := admit.DefaultConfig()
	def.Dataset = ds.Name
	o.Catalog, o.Limits, o.Defaults = cat, l, admit.PresetConfig(def, ds, l)
	srv, err := stream.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	return srv, o.Defaults
}

// startE2E serves srv's page on a test server and opens a w×h pixel window
// on it in the package's headless Chromium (exe); both close when t ends.
func startE2E(t *testing.T, exe string, srv *stream.Server, log *slog.Logger, w, h int) *e2e {
	t.Helper()
	hs := httptest.NewServer(New(srv, srv, log))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		hs.Close()
	})
	return &e2e{t: t, ctx: browserTab(t, exe, w, h), base: hs.URL, srv: srv}
}

// browserTab opens a window of w×h pixels in the package's Chromium
// (exe), in a browser context of its own: no cookies, storage or
// downloads carry over from another test. Its context is bounded by
// e2eTimeout and closes when t ends.
func browserTab(t testing.TB, exe string, w, h int) context.Context {
	t.Helper()
	tab, cancelTab := chromedp.NewContext(theBrowser(t, exe), chromedp.WithNewBrowserContext())
	// The first call opens the window; it must not have a timeout.
	if err := chromedp.Do(tab, chromedp.EmulateViewport(int64(w), int64(h))); err != nil {
		cancelTab()
		t.Fatalf("opening a window in %s: %v", exe, err)
	}
	ctx, cancelT := context.WithTimeout(tab, e2eTimeout)
	t.Cleanup(func() { cancelT(); cancelTab() })
	return ctx
}

// browser is the package's one headless Chromium, started by the first
// browser test and stopped by TestMain: starting one per test cost each
// test a browser's start-up (docs/measurements.md, "The CI suite's time").
var browser struct {
	sync.Mutex
	ctx  context.Context // its first tab; nil until started
	stop func()
	err  error
}

// theBrowser returns the package's Chromium (exe), starting it if need be.
func theBrowser(t testing.TB, exe string) context.Context {
	t.Helper()
	browser.Lock()
	defer browser.Unlock()
	if browser.ctx != nil && browser.ctx.Err() != nil {
		// It has gone (crashed, or a test ended it): a new one for the
		// tests that are left.
		browser.stop()
		browser.ctx, browser.stop = nil, nil
	}
	if browser.ctx == nil && browser.err == nil {
		browser.ctx, browser.stop, browser.err = startBrowser(exe)
	}
	if browser.err != nil {
		t.Fatalf("starting %s: %v", exe, browser.err)
	}
	return browser.ctx
}

func startBrowser(exe string) (context.Context, func(), error) {
	dir, err := os.MkdirTemp("", "dgpviz-chromium-")
	if err != nil {
		return nil, nil, err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(dir),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelB := chromedp.NewContext(actx)
	stop := func() { cancelB(); cancelA(); os.RemoveAll(dir) }
	// The first call starts the browser; it must not have a timeout.
	if err := chromedp.Do(bctx); err != nil {
		stop()
		return nil, nil, err
	}
	return bctx, stop, nil
}

// TestMain stops the browser the package's browser tests shared.
func TestMain(m *testing.M) {
	code := m.Run()
	if browser.stop != nil {
		browser.stop()
	}
	os.Exit(code)
}

func (e *e2e) run(actions ...chromedp.Action[chromedp.Void]) {
	e.t.Helper()
	if err := chromedp.Do(e.ctx, actions...); err != nil {
		e.t.Fatal(err)
	}
}

func (e *e2e) text(sel string) string {
	e.t.Helper()
	s, err := chromedp.Run(e.ctx, chromedp.TextContent(sel))
	if err != nil {
		e.t.Fatal(err)
	}
	return strings.TrimSpace(s)
}

// evalAs evaluates js (awaiting a promise) and decodes its value.
func evalAs[T any](e *e2e, js string) T {
	e.t.Helper()
	v, err := chromedp.Run(e.ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		e.t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

func (e *e2e) eval(js string, out any) {
	e.t.Helper()
	switch o := out.(type) {
	case *float64:
		*o = evalAs[float64](e, js)
	case *string:
		*o = evalAs[string](e, js)
	case *[]float64:
		*o = evalAs[[]float64](e, js)
	case *[]string:
		*o = evalAs[[]string](e, js)
	case nil:
		evalAs[any](e, js)
	default:
		e.t.Fatalf("eval: unsupported %T", out)
	}
}

// waitFor polls the JS condition until it is true (up to 20 s).
func (e *e2e) waitFor(what, cond string) {
	e.t.Helper()
	e.waitForWithin(20*time.Second, what, cond)
}

// waitForWithin is waitFor with its own time limit: a preset's restarts
// or an optimizer's recovery under -race on a busy machine take longer
// than 20 s.
func (e *e2e) waitForWithin(timeout time.Duration, what, cond string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, timeout)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[any](cond, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(timeout))); err != nil {
		diag, _ := chromedp.Run(e.ctx, chromedp.Evaluate[string](`document.getElementById("iteration").textContent + " | " + document.getElementById("status").textContent + " | " + document.getElementById("toast").textContent + " | " + location.search`))
		e.t.Fatalf("waiting for %s (%s): %v; page: %s", what, cond, err, diag)
	}
}

// openPaused opens the step demo paused and waits for its first frame.
func (e *e2e) openPaused() {
	e.t.Helper()
	e.run(chromedp.Navigate(e.base + "/?play=0&speed=0"))
	e.waitFor("a frame", `window.dgpviz && window.dgpviz.state.setup && window.dgpviz.state.frame && window.dgpviz.state.frame.bound != null`)
}

func (e *e2e) iteration() int {
	e.t.Helper()
	n, err := strconv.Atoi(e.text(`[data-testid="iteration"]`))
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

const canvasStats = `(() => {
  const c = document.querySelector(%q);
  const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  let h = 0, ink = 0;
  for (let i = 0; i < d.length; i += 4) {
    h = (Math.imul(h, 31) + d[i] + 7 * d[i + 1] + 13 * d[i + 2] + 17 * d[i + 3]) >>> 0;
    if (d[i + 3] > 0) ink++;
  }
  return [h, ink];
})()`

func (e *e2e) canvas(sel string) (hash, ink float64) {
	e.t.Helper()
	v := evalAs[[]float64](e, fmt.Sprintf(canvasStats, sel))
	return v[0], v[1]
}

// settle waits until the page has drawn what it last received.
func (e *e2e) settle() {
	e.t.Helper()
	e.eval(`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, nil)
}

// screenshot saves a PNG of the element sel (the whole page when sel is
// "") in the artifact directory, for people to look at.
func (e *e2e) screenshot(name, sel string) {
	e.t.Helper()
	act := chromedp.FullScreenshot(100)
	if sel != "" {
		act = chromedp.Screenshot(sel)
	}
	png, err := chromedp.Run(e.ctx, act)
	if err != nil {
		e.t.Fatal(err)
	}
	path := filepath.Join(artifactDir(e.t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.t.Logf("screenshot: %s", path)
}

// noErrors fails if the page recorded a script error.
func (e *e2e) noErrors() {
	e.t.Helper()
	if errs := evalAs[[]string](e, `window.dgpviz ? window.dgpviz.errors : ["app.js did not load"]`); len(errs) > 0 {
		e.t.Errorf("page errors: %q", errs)
	}
}

func TestBrowser(t *testing.T) {
	e := newE2E(t)

	t.Run("loads and renders frames", func(t *testing.T) {
		e.t = t
		e.run(chromedp.Navigate(e.base + "/?play=1&speed=30"))
		e.waitFor("three layer panels", `!!document.querySelector('[data-testid="panel-layer-2"] canvas')`)
		e.waitFor("a bound", `document.getElementById("bound-value").textContent !== "–"`)
		e.waitFor("iterations", `Number(document.getElementById("iteration").textContent) > 3`)
		for _, sel := range []string{"#panel-fit canvas", "#panel-layer-0 canvas", "#panel-layer-2 canvas", "#panel-bound canvas"} {
			if _, ink := e.canvas(sel); ink < 2000 {
				t.Errorf("%s: only %v painted pixels", sel, ink)
			}
		}
		h0, _ := e.canvas("#panel-bound canvas")
		it := e.iteration()
		e.waitFor("more iterations", fmt.Sprintf(`Number(document.getElementById("iteration").textContent) > %d`, it+5))
		e.eval(`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, nil)
		if h1, _ := e.canvas("#panel-bound canvas"); h1 == h0 {
			t.Errorf("bound canvas did not change while optimising")
		}
		e.noErrors()
	})

	t.Run("play pause step and keys", func(t *testing.T) {
		e.t = t
		e.run(chromedp.Navigate(e.base + "/?play=0&speed=20"))
		e.waitFor("first frame", `!!document.querySelector('[data-testid="panel-layer-2"]') && document.getElementById("iteration").textContent === "0"`)
		e.run(chromedp.Click(`[data-testid="step"]`))
		e.waitFor("one step", `document.getElementById("iteration").textContent === "1"`)
		e.run(chromedp.Click(`[data-testid="play"]`))
		e.waitFor("playing", `document.querySelector('[data-testid="play"]').getAttribute("aria-pressed") === "true"`)
		e.waitFor("progress", `Number(document.getElementById("iteration").textContent) >= 6`)
		e.run(chromedp.Click(`[data-testid="play"]`))
		e.waitFor("paused", `document.querySelector('[data-testid="play"]').getAttribute("aria-pressed") === "false"`)
		e.waitFor("a paused frame", `window.dgpviz.state.frame.running === false`)
		if !strings.Contains(e.text("#status"), "paused") && !strings.Contains(e.text("#status"), "converged") {
			t.Errorf("status %q after pause", e.text("#status"))
		}
		it := e.iteration()
		time.Sleep(400 * time.Millisecond) // at 20 it/s, a running optimizer would make ~8 iterations
		if it2 := e.iteration(); it2 != it {
			t.Errorf("iteration moved from %d to %d while paused", it, it2)
		}
		// keyboard: s steps, space plays and pauses
		e.eval(`document.activeElement.blur(), true`, nil)
		e.run(chromedp.KeyEvent("s"))
		e.waitFor("key step", fmt.Sprintf(`document.getElementById("iteration").textContent === "%d"`, it+1))
		e.run(chromedp.KeyEvent(" "))
		e.waitFor("space plays", `document.querySelector('[data-testid="play"]').getAttribute("aria-pressed") === "true"`)
		e.run(chromedp.KeyEvent(" "))
		e.waitFor("space pauses", `document.querySelector('[data-testid="play"]').getAttribute("aria-pressed") === "false" && window.dgpviz.state.frame.running === false`)
		e.noErrors()
	})

	t.Run("a stopped optimizer says why", func(t *testing.T) {
		e.t = t
		// A one-layer GP with 4 inducing points converges in a few dozen
		// iterations.
		e.run(chromedp.Navigate(e.base + "/?hidden=&m=4&speed=0&play=1"))
		e.waitFor("converged", `(() => { const f = window.dgpviz?.state.frame; return !!f && f.optimizer.converged && !f.running && !window.dgpviz.state.running; })()`)
		got := evalAs[[]string](e, `(() => { const st = document.getElementById("status"), o = window.dgpviz.state.frame.optimizer; return [st.textContent, st.title, o.status, o.explain]; })()`)
		text, title, status, explain := got[0], got[1], got[2], got[3]
		if text != "converged ("+status+")" || explain == "" || title != "Stopped by "+status+" ("+explain+")" {
			t.Errorf("status %q with title %q; want converged (%s) and why: %q", text, title, status, explain)
		}
		e.noErrors()
	})

	t.Run("dragging an inducing point changes the bound", func(t *testing.T) {
		e.t = t
		e.run(chromedp.Navigate(e.base + "/?play=0&speed=20"))
		e.waitFor("handles", `window.dgpviz && window.dgpviz.handle(2, 5) !== null && document.getElementById("bound-value").textContent !== "–"`)
		e.settle()
		before := e.text(`[data-testid="bound-value"]`)
		var z0 float64
		e.eval(`window.dgpviz.state.frame.layers[2].z[5]`, &z0)
		var xy []float64
		e.eval(`window.dgpviz.handle(2, 5)`, &xy)
		x, y := xy[0], xy[1]
		e.run(
			chromedp.MouseEvent(chromedp.MouseMoved, x, y),
			chromedp.MouseEvent(chromedp.MousePressed, x, y, chromedp.ButtonLeft),
		)
		// Mostly sideways: a move of the inducing input.
		for k := 1; k <= 10; k++ {
			e.run(chromedp.MouseEvent(chromedp.MouseMoved, x+float64(9*k), y+float64(2*k), chromedp.ButtonLeft))
			time.Sleep(15 * time.Millisecond)
		}
		// While dragging, the panel shows the bound change, layer by layer.
		e.waitFor("the edit's readout", `[...document.querySelectorAll('[data-testid="edit-readout"]')].some(el => !el.hidden && el.textContent.includes("Δ bound") && el.textContent.includes("compr."))`)
		e.run(chromedp.MouseEvent(chromedp.MouseReleased, x+90, y+20, chromedp.ButtonLeft))
		e.waitFor("bound change", fmt.Sprintf(`document.getElementById("bound-value").textContent !== %q`, before))
		var z1 float64
		e.eval(`window.dgpviz.state.frame.layers[2].z[5]`, &z1)
		if z1 <= z0 {
			t.Errorf("dragging right moved z from %v to %v", z0, z1)
		}
		e.noErrors()
	})

	t.Run("double-click adds and alt-click removes an inducing point", func(t *testing.T) {
		e.t = t
		e.run(chromedp.Navigate(e.base + "/?play=0&speed=20"))
		e.waitFor("handles", `window.dgpviz && window.dgpviz.handle(0, 0) !== null`)
		e.settle()
		// a free spot in layer 1's plot, at least 25 px from every handle
		spot := evalAs[[]float64](e, `(() => {
		  const r = document.querySelector("#panel-layer-0 canvas").getBoundingClientRect();
		  const hs = [...Array(window.dgpviz.state.frame.layers[0].m).keys()].map(k => window.dgpviz.handle(0, k));
		  for (let fy = 0.15; fy < 0.7; fy += 0.05) for (let fx = 0.2; fx < 0.9; fx += 0.05) {
		    const x = r.left + fx * r.width, y = r.top + fy * r.height;
		    if (hs.every(([hx, hy]) => Math.hypot(hx - x, hy - y) > 25)) return [x, y];
		  }
		  return [];
		})()`)
		if len(spot) != 2 {
			t.Fatal("no free spot in the layer panel")
		}
		e.run(
			chromedp.MouseClickXY(spot[0], spot[1]),
			chromedp.MouseClickXY(spot[0], spot[1], chromedp.ClickCount(2)),
		)
		e.waitFor("a 13th inducing point", `window.dgpviz.state.frame.layers[0].m === 13`)
		e.settle()
		xy := evalAs[[]float64](e, `window.dgpviz.handle(0, 3)`)
		e.run(chromedp.MouseClickXY(xy[0], xy[1], chromedp.ButtonModifiers(chromedp.ModifierAlt)))
		e.waitFor("back to 12", `window.dgpviz.state.frame.layers[0].m === 12`)
		e.noErrors()
	})

	t.Run("URL state round-trips", func(t *testing.T) {
		e.t = t
		e.run(chromedp.Navigate(e.base + "/?data=step&hidden=2&m=8&opt=adam&lr=0.05&seed=5&frozen=kernel&play=0&speed=20"))
		e.waitFor("two layers", `!!document.querySelector('[data-testid="panel-layer-1"]') && !document.querySelector('[data-testid="panel-layer-2"]')`)
		check := func(want map[string]string) {
			t.Helper()
			for sel, v := range want {
				var got string
				e.eval(fmt.Sprintf(`(() => { const el = document.querySelector('[data-testid=%q]'); return el.type === "checkbox" ? String(el.checked) : el.value; })()`, sel), &got)
				if got != v {
					t.Errorf("%s = %q, want %q", sel, got, v)
				}
			}
		}
		check(map[string]string{"hidden": "2", "inducing": "8", "optimizer": "adam", "learning-rate": "0.05", "seed": "5", "freeze-kernel": "true", "freeze-noise": "false", "speed": "20"})
		var m float64
		e.eval(`window.dgpviz.state.frame.layers[0].m`, &m)
		if m != 8 {
			t.Errorf("layer 0 has %v inducing points, want 8", m)
		}
		// Change settings in the page: they land in the URL...
		e.run(chromedp.Click(`[data-testid="freeze-noise"]`))
		e.waitFor("frozen in URL", `new URLSearchParams(location.search).get("frozen") === "kernel,noise"`)
		e.run(chromedp.SetValue(`[data-testid="seed"]`, "9"), chromedp.Click(`[data-testid="reset"]`))
		e.waitFor("seed in URL", `new URLSearchParams(location.search).get("seed") === "9"`)
		// ...and a reload reproduces them.
		var href string
		e.eval(`location.href`, &href)
		e.run(chromedp.Navigate(href))
		e.waitFor("reloaded", `!!document.querySelector('[data-testid="panel-layer-1"]') && window.dgpviz.state.frame !== null`)
		check(map[string]string{"hidden": "2", "inducing": "8", "optimizer": "adam", "seed": "9", "freeze-kernel": "true", "freeze-noise": "true"})
		var frozen []string
		e.eval(`window.dgpviz.state.frame.optimizer.frozen`, &frozen)
		if strings.Join(frozen, ",") != "kernel,noise" {
			t.Errorf("the reloaded session has frozen %v", frozen)
		}
		e.noErrors()
	})

	t.Run("screenshot", func(t *testing.T) {
		e.t = t
		e.run(chromedp.Navigate(e.base + "/?play=1&speed=60"))
		e.waitFor("a trained model", `Number(document.getElementById("iteration").textContent) >= 120 || document.getElementById("status").textContent.startsWith("converged")`)
		e.run(chromedp.Click(`[data-testid="play"]`))
		e.waitFor("paused", `document.querySelector('[data-testid="play"]').getAttribute("aria-pressed") === "false"`)
		e.eval(`document.querySelectorAll("details.explain")[1].open = true`, nil)
		e.settle()
		e.screenshot("dgpviz-page.png", "")
		e.noErrors()
	})

	t.Run("connection-lost banner", func(t *testing.T) {
		e.t = t
		e.run(chromedp.Navigate(e.base + "/?play=0"))
		e.waitFor("connected", `window.dgpviz && window.dgpviz.state.connected && window.dgpviz.state.frame !== null`)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e.srv.Shutdown(ctx)
		e.waitFor("banner", `!document.querySelector('[data-testid="connection-banner"]').hidden && document.querySelector('[data-testid="connection-banner"]').textContent.includes("Reconnecting")`)
	})
}
