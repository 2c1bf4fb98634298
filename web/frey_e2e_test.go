package web

import (
	"bytes"
	"fmt"
	"image/png"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/stream"
	"dgpviz/internal/train"

	"github.com/chromedp/chromedp"
)

// freyCatalogData returns the Frey faces: the real frames when
// DGPVIZ_FREY_REAL=1 and they are present, else the generated 60-frame
// fixture (the browser test's default: the real preset takes seconds to
// start on a busy 2-core machine).
func freyCatalogData(t *testing.T) *dataset.Dataset {
	t.Helper()
	paths := []string{filepath.Join("..", "internal", "dataset", "testdata", "frey_small.mat")}
	if os.Getenv("DGPVIZ_FREY_REAL") != "" {
		real := filepath.Join("..", "..", "shared", "data", "frey_faces", "frey_rawface.mat")
		if _, err := os.Stat(real); err != nil {
			t.Logf("DGPVIZ_FREY_REAL is set but %s is absent: using the fixture", real)
		} else {
			paths = append([]string{real}, paths...)
		}
	}
	for _, p := range paths {
		if ds, err := dataset.LoadFrey(p); err == nil {
			t.Logf("Frey data: %s", p)
			return ds
		}
	}
	t.Fatal("no Frey data, not even the fixture")
	return nil
}

// newFreyE2E is newE2E with the Frey faces as the server's default, in the
// Frey preset (as `viz serve -data frey:PATH`).
func newFreyE2E(t *testing.T) *e2e {
	t.Helper()
	exe := requireBrowser(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ds := freyCatalogData(t)
	l := admit.DefaultLimits()
	cat, err := dataset.NewCatalog(nil, l.MaxRows)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Add(ds, l.MaxRows); err != nil {
		t.Fatal(err)
	}
	l = admit.PresetLimits(l, cat)
	def := admit.DefaultConfig()
	def.Dataset = "frey"
	def = admit.PresetConfig(def, ds, l)
	srv, err := stream.NewServer(stream.Options{Catalog: cat, Limits: l, Defaults: def, Workers: 1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return startE2E(t, exe, srv, log, 1500, 1300)
}

// TestBrowserFrey opens the Frey faces view on the fixture: the latent map
// draws (points, colour bar, face tiles), the cursor decodes a face that
// changes when the cursor moves, hovering a point shows its frame beside
// its reconstruction, the frame range lights up a stretch of the video,
// dragging a decoder inducing input sends a move and the bound changes,
// the tiles toggle, the map uses its width at 1024, 1280 and 1920 px (its
// faces beside it), and the figure downloads work. Screenshots at
// 1280×720 and 1920×1080.
func TestBrowserFrey(t *testing.T) {
	e := newFreyE2E(t)
	start := time.Now()
	e.run(chromedp.Navigate(e.base + "/?data=frey&hidden=2&m=15&play=0&speed=0"))
	// The preset's restarts run before the first frame: seconds on the
	// real frames of a busy machine.
	for range 6 {
		if evalAs[bool](e, `new Promise(r => { const t0 = Date.now(); const tick = () => { const ok = window.dgpviz && window.dgpviz.state.frame && window.dgpviz.state.frame.bound != null; if (ok || Date.now() - t0 > 15000) r(!!ok); else setTimeout(tick, 50); }; tick(); })`) {
			break
		}
	}
	e.waitFor("the Frey view", `window.dgpviz && window.dgpviz.panels.autoencoder && window.dgpviz.panels.autoencoder.stats.draws > 1 && !document.getElementById("panel-autoencoder").hidden && window.dgpviz.state.frame && window.dgpviz.state.frame.bound != null`)
	t.Logf("Frey view drawn %v after navigating", time.Since(start).Round(time.Millisecond))
	if cfg := evalAs[[]float64](e, `window.dgpviz.state.config.hidden`); !slices.Equal(cfg, []float64{2}) {
		t.Fatalf("Frey preset: hidden %v, want [2]", cfg)
	}
	for _, id := range []string{"panel-fit", "panel-messages", "panel-depth"} {
		if !evalAs[bool](e, fmt.Sprintf(`getComputedStyle(document.getElementById(%q)).display === "none"`, id)) {
			t.Errorf("%s should be hidden in the Frey view", id)
		}
	}
	if n := evalAs[float64](e, `document.querySelectorAll("#layer-panels > *").length`); n != 0 {
		t.Errorf("%v layer panels in the Frey view, want none", n)
	}
	// The map: points, inducing inputs and tiles.
	e.waitFor("face tiles", `Number(document.querySelector('[data-testid="autoencoder-map"]').dataset.tiles) === 49`)
	e.settle()
	n := evalAs[float64](e, `Number(document.querySelector('[data-testid="autoencoder-map"]').dataset.points)`)
	if m, want := evalAs[float64](e, `Number(document.querySelector('[data-testid="autoencoder-map"]').dataset.inducing)`), evalAs[float64](e, `window.dgpviz.state.setup.n`); n != want || m != train.FreyDecoderInducing {
		t.Errorf("map draws %v points and %v inducing inputs, want %v and %d (the preset's decoder)", n, m, want, train.FreyDecoderInducing)
	}
	hTiles, inkTiles := e.canvas(`[data-testid="autoencoder-map"]`)
	if inkTiles < 5000 {
		t.Errorf("the latent map is (nearly) blank: %v inked pixels", inkTiles)
	}
	// Tiles off and on again.
	e.run(chromedp.Click(`[data-testid="autoencoder-tiles"]`))
	e.waitFor("no tiles", `document.querySelector('[data-testid="autoencoder-map"]').dataset.tiles === "0"`)
	e.settle()
	hOff, inkOff := e.canvas(`[data-testid="autoencoder-map"]`)
	if hOff == hTiles || inkOff >= inkTiles {
		t.Errorf("toggling the tiles off: ink %v → %v, hash changed %v", inkTiles, inkOff, hOff != hTiles)
	}
	e.run(chromedp.Click(`[data-testid="autoencoder-tiles"]`))
	e.waitFor("tiles again", `Number(document.querySelector('[data-testid="autoencoder-map"]').dataset.tiles) === 49`)
	e.settle()
	if h, ink := e.canvas(`[data-testid="autoencoder-map"]`); ink <= inkOff || h == hOff {
		t.Errorf("tiles back on: ink %v, not more than without tiles (%v), or the same picture (%v)", ink, inkOff, h == hOff)
	}

	// The cursor: a face at two places in the latent space.
	rect := evalAs[[]float64](e, `(() => { const r = document.querySelector('[data-testid="autoencoder-map"]').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	// Empty spots: the map's corners inside the axes are far from most points.
	spot := func(fx, fy float64) (float64, float64) {
		return rect[0] + 62 + fx*(rect[2]-76), rect[1] + 10 + fy*(rect[3]-84)
	}
	x1, y1 := spot(0.1, 0.12)
	t0 := time.Now()
	e.run(chromedp.MouseEvent(chromedp.MouseMoved, x1, y1))
	e.waitFor("a decoded face", `document.querySelector('[data-testid="autoencoder-cursor-mean"]').dataset.at !== undefined`)
	t.Logf("cursor → decoded face on the page: %v", time.Since(t0).Round(time.Millisecond))
	e.settle()
	at1 := evalAs[string](e, `document.querySelector('[data-testid="autoencoder-cursor-mean"]').dataset.at`)
	f1, ink1 := e.canvas(`[data-testid="autoencoder-cursor-mean"]`)
	v1, _ := e.canvas(`[data-testid="autoencoder-cursor-var"]`)
	if ink1 != 560 {
		t.Errorf("the cursor's face has %v inked pixels, want 560 (28 × 20)", ink1)
	}
	x2, y2 := spot(0.9, 0.88)
	e.run(chromedp.MouseEvent(chromedp.MouseMoved, x2, y2))
	e.waitFor("another face", fmt.Sprintf(`document.querySelector('[data-testid="autoencoder-cursor-mean"]').dataset.at !== %q`, at1))
	e.settle()
	f2, _ := e.canvas(`[data-testid="autoencoder-cursor-mean"]`)
	v2, _ := e.canvas(`[data-testid="autoencoder-cursor-var"]`)
	if f1 == f2 {
		t.Errorf("the decoded face did not change when the cursor moved across the map")
	}
	if v1 == v2 {
		t.Errorf("the predictive sd image did not change when the cursor moved across the map")
	}
	t.Logf("cursor: %s", e.text(`[data-testid="autoencoder-cursor-at"]`))

	// Hover a data point: its frame beside its reconstruction.
	p := evalAs[[]float64](e, `(() => { const f = window.dgpviz.state.frame, m = f.layers[0].mean; return window.dgpviz.panels.autoencoder.screen(m[2 * 17], m[2 * 17 + 1]); })()`)
	e.run(chromedp.MouseEvent(chromedp.MouseMoved, rect[0]+p[0], rect[1]+p[1]))
	e.waitFor("a frame and its reconstruction", `document.querySelector('[data-testid="autoencoder-frame-orig"]').dataset.frame !== undefined`)
	e.settle()
	hovered := evalAs[string](e, `document.querySelector('[data-testid="autoencoder-frame-orig"]').dataset.frame`)
	_, inkO := e.canvas(`[data-testid="autoencoder-frame-orig"]`)
	_, inkR := e.canvas(`[data-testid="autoencoder-frame-recon"]`)
	if inkO != 560 || inkR != 560 {
		t.Errorf("frame %s: original %v, reconstruction %v inked pixels, want 560 each", hovered, inkO, inkR)
	}
	t.Logf("hovered frame %s: %s", hovered, e.text(`[data-testid="autoencoder-frame-at"]`))

	// A stretch of the video.
	e.eval(`window.dgpviz.panels.autoencoder.range(10, 25), true`, nil)
	e.settle()
	if lit := evalAs[map[string]float64](e, `window.dgpviz.panels.autoencoder.lit`); lit["from"] != 10 || lit["to"] != 25 {
		t.Errorf("lit stretch %v, want 10–25", lit)
	}
	if v := evalAs[string](e, `document.querySelector('[data-testid="autoencoder-from"]').value + "-" + document.querySelector('[data-testid="autoencoder-to"]').value`); v != "11-26" {
		t.Errorf("range inputs %q, want 11-26 (rows 10–25 counted from 1)", v)
	}
	shotFrey(e, "lit")
	e.eval(`window.dgpviz.panels.autoencoder.range(-1), true`, nil)
	// …and by dragging along the video strip, from 20 % to 40 % of it.
	e.eval(`window.scrollTo(0, 0), true`, nil)
	e.settle()
	sr := evalAs[[]float64](e, `(() => { const r = document.querySelector('[data-testid="autoencoder-strip"]').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	sx := func(f float64) float64 { return sr[0] + 62 + f*(sr[2]-76) }
	sy := sr[1] + 4 + (sr[3]-20)/2
	e.run(chromedp.MouseEvent(chromedp.MouseMoved, sx(0.2), sy), chromedp.MouseEvent(chromedp.MousePressed, sx(0.2), sy, chromedp.ButtonLeft))
	for k := 1; k <= 4; k++ {
		e.run(chromedp.MouseEvent(chromedp.MouseMoved, sx(0.2+0.05*float64(k)), sy, chromedp.ButtonLeft))
	}
	e.run(chromedp.MouseEvent(chromedp.MouseReleased, sx(0.4), sy, chromedp.ButtonLeft))
	e.settle()
	lit := evalAs[map[string]float64](e, `window.dgpviz.panels.autoencoder.lit`)
	if nn := n - 1; math.Abs(lit["from"]-0.2*nn) > 0.03*nn+1 || math.Abs(lit["to"]-0.4*nn) > 0.03*nn+1 {
		t.Errorf("dragging the strip from 20 %% to 40 %%: frames %v–%v lit of %v", lit["from"], lit["to"], n)
	}
	e.eval(`window.dgpviz.panels.autoencoder.range(-1), true`, nil)

	// Drag decoder inducing input 4 by 50 px: a move, and the bound changes.
	e.eval(`window.scrollTo(0, 0), true`, nil)
	e.settle()
	rect = evalAs[[]float64](e, `(() => { const r = document.querySelector('[data-testid="autoencoder-map"]').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	b0 := evalAs[float64](e, `window.dgpviz.state.frame.bound`)
	z0 := evalAs[[]float64](e, `Array.from(window.dgpviz.state.frame.layers[1].z.slice(6, 8))`)
	h := evalAs[[]float64](e, `window.dgpviz.panels.autoencoder.handle(3)`)
	hx, hy := rect[0]+h[0], rect[1]+h[1]
	e.run(chromedp.MouseEvent(chromedp.MouseMoved, hx, hy), chromedp.MouseEvent(chromedp.MousePressed, hx, hy, chromedp.ButtonLeft))
	for k := 1; k <= 10; k++ {
		e.run(chromedp.MouseEvent(chromedp.MouseMoved, hx+float64(5*k), hy-float64(3*k), chromedp.ButtonLeft))
		time.Sleep(20 * time.Millisecond)
	}
	e.run(chromedp.MouseEvent(chromedp.MouseReleased, hx+50, hy-30, chromedp.ButtonLeft))
	e.waitFor("the moved inducing input", fmt.Sprintf(`window.dgpviz.state.frame.layers[1].z[6] > %v && !document.getElementById("undo").disabled`, z0[0]))
	e.settle()
	b1 := evalAs[float64](e, `window.dgpviz.state.frame.bound`)
	t.Logf("50 px drag of decoder inducing input 4: z (%.3f, %.3f) → (%.3f, %.3f); bound %.3f → %.3f",
		z0[0], z0[1], evalAs[float64](e, `window.dgpviz.state.frame.layers[1].z[6]`), evalAs[float64](e, `window.dgpviz.state.frame.layers[1].z[7]`), b0, b1)
	if b1 == b0 {
		t.Errorf("the bound did not change after moving a decoder inducing input (%v)", b0)
	}
	if s := e.text(`[data-testid="message"]`); s != "" && strings.Contains(strings.ToLower(s), "error") {
		t.Errorf("toast after the drag: %q", s)
	}

	// Run the optimizer a little: the map follows, the cursor face updates.
	e.run(chromedp.Click(`[data-testid="play"]`))
	e.waitFor("iterations", `window.dgpviz.state.frame.iter >= 20`)
	t.Logf("playing: %s it/s shown by the page", e.text(`[data-testid="ips"]`))
	// Drawing time of the Frey view per frame (performance measures "autoencoder-draw"), logged.
	t.Logf("Frey view drawing: %s", evalAs[string](e, `(() => {
	  const d = performance.getEntriesByName("autoencoder-draw").map((m) => m.duration).sort((a, b) => a - b);
	  if (!d.length) return "no measures";
	  const q = (p) => d[Math.min(d.length - 1, Math.floor(p * d.length))].toFixed(1);
	  return d.length + " draws, p50 " + q(0.5) + " ms, p95 " + q(0.95) + " ms";
	})()`))
	e.run(chromedp.Click(`[data-testid="play"]`))
	e.waitFor("paused", `window.dgpviz.state.frame.running === false`)
	e.waitFor("tiles of the new model", `Number(document.querySelector('[data-testid="autoencoder-map"]').dataset.tiles) === 49`)

	// The server's figure and the latent CSV.
	key := evalAs[string](e, `window.dgpviz.state.figureKey`)
	for _, f := range []string{"png", "svg", "pdf", "csv"} {
		// The page's own links, as a person clicks them (the CSV's once
		// carried a grid the server refused).
		href := evalAs[string](e, fmt.Sprintf(`(() => { const a = document.querySelector('.autoencoder-figure-links a[data-format=%q]'); a.dispatchEvent(new MouseEvent("click", {cancelable: true})); return a.getAttribute("href"); })()`, f))
		resp, err := http.Get(e.base + href)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(body) < 1000 {
			t.Errorf("faces.%s: %d, %d bytes: %.200s", f, resp.StatusCode, len(body), body)
		}
		if f == "csv" && !strings.HasPrefix(string(body), "row,layer1_dim1_mean [latent],layer1_dim2_mean [latent],layer1_dim1_var [latent],layer1_dim2_var [latent]\n1,") {
			t.Errorf("latent CSV header: %.80q", body)
		}
		if f == "png" {
			os.WriteFile(filepath.Join(artifactDir(t), "autoencoder-figure.png"), body, 0o644)
			if cfg, err := png.DecodeConfig(bytes.NewReader(body)); err != nil || cfg.Width < 1600 {
				t.Errorf("faces.png: %v, %d px wide, want ≥ 1600", err, cfg.Width)
			}
		}
	}
	for q, want := range map[string]string{"grid=99": "grid", "grid=x": "grid", "layer=0": "does not apply", "colour=1": "unknown parameter"} {
		resp, err := http.Get(e.base + "/figure/faces.png?session=" + key + "&" + q)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(body), want) {
			t.Errorf("faces.png?%s: %d %q, want 400 saying %q", q, resp.StatusCode, body, want)
		}
	}
	// Screenshots at lecture-hall sizes, with the cursor over the map.
	e.eval(`window.scrollTo(0, 0), true`, nil)
	rect = evalAs[[]float64](e, `(() => { const r = document.querySelector('[data-testid="autoencoder-map"]').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	x1, y1 = spot(0.1, 0.12)
	e.run(chromedp.MouseEvent(chromedp.MouseMoved, x1, y1))
	shotFrey(e, "view")

	// The map uses its width at the three sizes: the points span most of
	// it (equal axes on a round latent left half of a wide map empty), and
	// the faces beside it stay inside the panel.
	for _, sz := range [][2]int64{{1024, 768}, {1280, 720}, {1920, 1080}} {
		e.run(chromedp.EmulateViewport(sz[0], sz[1]))
		e.settle()
		got := evalAs[[]float64](e, mapUse)
		t.Logf("at %d×%d: the points span %.0f %% of the map's width, %.0f %% of its height; the faces end %.0f px inside the panel", sz[0], sz[1], 100*got[0], 100*got[1], got[2])
		// (before: 36 % at 1920×1080, 39 % at 1280×720; the height's
		// margins hold the colour bar, so it is about 75 % at any size)
		if got[0] < 0.5 {
			t.Errorf("at %d×%d the points span %.0f %% of the map's width, want at least half: the map's space is unused", sz[0], sz[1], 100*got[0])
		}
		if got[2] < 0 {
			t.Errorf("at %d×%d the faces leave the panel by %.0f px", sz[0], sz[1], -got[2])
		}
	}
	e.run(chromedp.EmulateViewport(1500, 1300))

	// Presentation mode (drawn at 1.4×): the map fills most of the screen,
	// the side column stays inside the panel, the bound runs full width
	// below, and the pointer still lands where it points.
	e.run(chromedp.EmulateViewport(1280, 720))
	e.eval(`document.dispatchEvent(new KeyboardEvent("keydown", {key: "p"})), window.scrollTo(0, 0), true`, nil)
	e.waitFor("presentation mode", `document.body.classList.contains("present")`)
	e.settle()
	box := func(sel string) []float64 {
		return evalAs[[]float64](e, fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`, sel))
	}
	pm, pp, ps, pb := box(`[data-testid="autoencoder-map"]`), box(`[data-testid="panel-autoencoder"]`), box(`#panel-autoencoder .fv-side`), box(`[data-testid="panel-bound"]`)
	t.Logf("presenting at 1280×720: map %.0f×%.0f, panel %.0f×%.0f, side bottom %.0f, bound %.0f wide", pm[2], pm[3], pp[2], pp[3], ps[1]+ps[3], pb[2])
	if pm[3] < 0.45*720 {
		t.Errorf("presenting: the latent map is %.0f px high, want at least 45 %% of the 720 px screen", pm[3])
	}
	if ps[1]+ps[3] > pp[1]+pp[3]+1 {
		t.Errorf("presenting: the faces column ends at %.0f, below its panel (%.0f)", ps[1]+ps[3], pp[1]+pp[3])
	}
	if math.Abs(pb[2]-pp[2]) > 2 {
		t.Errorf("presenting: the bound panel is %.0f px wide, the Frey panel %.0f", pb[2], pp[2])
	}
	p = evalAs[[]float64](e, `(() => { const f = window.dgpviz.state.frame, m = f.layers[0].mean; return window.dgpviz.panels.autoencoder.screen(m[2 * 29], m[2 * 29 + 1]); })()`)
	e.run(chromedp.MouseEvent(chromedp.MouseMoved, pm[0]+p[0], pm[1]+p[1]))
	e.waitFor("the hovered frame while presenting", `document.querySelector('[data-testid="autoencoder-frame-orig"]').dataset.frame !== `+fmt.Sprintf("%q", hovered))
	t.Logf("presenting: hovered frame %s (aimed at 29)", evalAs[string](e, `document.querySelector('[data-testid="autoencoder-frame-orig"]').dataset.frame`))
	shotFrey(e, "present")
	e.noErrors()
}

// shotFrey saves screenshots of the Frey panel at 1280×720 and 1920×1080.
func shotFrey(e *e2e, name string) {
	e.t.Helper()
	for _, sz := range [][2]int64{{1280, 720}, {1920, 1080}} {
		e.run(chromedp.EmulateViewport(sz[0], sz[1]))
		e.eval(`document.querySelector('[data-testid="panel-autoencoder"]').scrollIntoView({block: "start"}); new Promise(r => setTimeout(() => r(true), 400))`, nil)
		e.settle()
		png, err := chromedp.Run(e.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			e.t.Fatal(err)
		}
		path := filepath.Join(artifactDir(e.t), fmt.Sprintf("autoencoder-%s-%dx%d.png", name, sz[0], sz[1]))
		if err := os.WriteFile(path, png, 0o644); err != nil {
			e.t.Fatal(err)
		}
		e.t.Logf("screenshot: %s", path)
	}
	e.run(chromedp.EmulateViewport(1500, 1300))
}

// mapUse measures the Frey map's use of its space: the fractions of its
// canvas's width and height that the points span, and how far the faces'
// column ends inside the panel (px; negative: outside).
const mapUse = `(() => {
  const cv = document.querySelector('[data-testid="autoencoder-map"]'), r = cv.getBoundingClientRect();
  const m = window.dgpviz.state.frame.layers[0].mean, ae = window.dgpviz.panels.autoencoder;
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (let i = 0; i < m.length; i += 2) { const [x, y] = ae.screen(m[i], m[i + 1]); x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y); }
  const side = [...document.querySelectorAll("#panel-autoencoder .fv-side *")].reduce((a, el) => Math.max(a, el.getBoundingClientRect().right), 0);
  const panel = document.querySelector('[data-testid="panel-autoencoder"]').getBoundingClientRect();
  return [(x1 - x0) / r.width, (y1 - y0) / r.height, panel.right - side];
})()`
