package web

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"dgpviz/internal/browsertest"
	"dgpviz/static"

	"github.com/chromedp/chromedp"
)

// pointsPage is a page of its own that draws n points (a walk-like
// cloud) at every animation frame, turning them a little each time as a
// drag turns the explorer's 3-D view, in one of two ways: script=1 with the
// explorer's every-row drawing (static/views/explorer/points.js), else with
// WebGL 1 as the explorer drew them before: the points uploaded once, the
// turn set by a uniform, size device pixels a side, round (discard outside
// the disc) and blend (alpha blending) as knobs. window.floor(ms) draws
// for ms milliseconds and returns [frames a second, the median interval
// between frames (ms), the median time of the draw itself (ms; WebGL's
// waited for by reading one pixel back), the inked pixels of the last
// frame].
const pointsPage = `<!doctype html><meta charset="utf-8"><body style="margin:0">
<div style="position:relative;width:720px;height:560px"><canvas id="c" style="width:720px;height:560px"></canvas></div>
<style>canvas.rv-points { position: absolute; inset: 0; width: 720px; height: 560px; pointer-events: none; }</style>
<script>
const q = new URLSearchParams(location.hash.slice(1));
const n = +q.get("n"), size = +q.get("size"), round = q.get("round") === "1", blend = q.get("blend") === "1";
const cv = document.getElementById("c"), dpr = window.devicePixelRatio || 1;
cv.width = 720 * dpr; cv.height = 560 * dpr;
// a walk-like cloud: a loop with noise, and a value in 0…1 per point
const xyz = new Float32Array(3 * n), val = new Float32Array(n);
let seed = 1; const r = () => (seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5;
for (let i = 0; i < n; i++) { const t = 6.283 * i / n; xyz.set([0.6 * Math.cos(t) + 0.1 * r(), 0.6 * Math.sin(3 * t) + 0.1 * r(), 0.3 * Math.sin(t) + 0.1 * r()], 3 * i); val[i] = i / n; }
const med = (a) => a.sort((x, y) => x - y)[a.length >> 1] ?? -1;
const ready = q.get("script") === "1" ? script() : Promise.resolve(webgl());

// webgl draws the cloud as the explorer did before points.js: uploaded once, turned by a uniform.
function webgl() {
  const gl = cv.getContext("webgl", { antialias: false, depth: false, premultipliedAlpha: true });
  const sh = (type, src) => { const s = gl.createShader(type); gl.shaderSource(s, src); gl.compileShader(s); return s; };
  const p = gl.createProgram();
  gl.attachShader(p, sh(gl.VERTEX_SHADER, "precision highp float; attribute vec3 a; attribute float v; uniform vec2 cs; uniform float size; varying vec3 vc;" +
    "void main() { vc = vec3(v, 0.4, 1.0 - v); gl_Position = vec4(cs.x * a.x - cs.y * a.y, 0.5 * (cs.y * a.x + cs.x * a.y) + 0.8 * a.z, 0.0, 1.0); gl_PointSize = size; }"));
  gl.attachShader(p, sh(gl.FRAGMENT_SHADER, "precision mediump float; varying vec3 vc;" +
    (round ? "void main() { vec2 d = gl_PointCoord - 0.5; if (dot(d, d) > 0.25) discard; gl_FragColor = vec4(vc * 0.55, 0.55); }" : "void main() { gl_FragColor = vec4(vc, 1.0); }")));
  gl.linkProgram(p); gl.useProgram(p);
  const buf = (arr, name, k) => { const b = gl.createBuffer(); gl.bindBuffer(gl.ARRAY_BUFFER, b); gl.bufferData(gl.ARRAY_BUFFER, arr, gl.STATIC_DRAW); const at = gl.getAttribLocation(p, name); gl.enableVertexAttribArray(at); gl.vertexAttribPointer(at, k, gl.FLOAT, false, 0, 0); };
  buf(xyz, "a", 3); buf(val, "v", 1);
  gl.uniform1f(gl.getUniformLocation(p, "size"), size);
  const cs = gl.getUniformLocation(p, "cs"), px = new Uint8Array(4);
  if (blend) { gl.enable(gl.BLEND); gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA); }
  gl.viewport(0, 0, cv.width, cv.height); gl.clearColor(0, 0, 0, 0);
  return {
    draw(angle) { gl.uniform2f(cs, Math.cos(angle), Math.sin(angle)); gl.clear(gl.COLOR_BUFFER_BIT); gl.drawArrays(gl.POINTS, 0, n); },
    wait() { gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px); }, // the draw done
    ink(angle) { // the drawing buffer is cleared once presented: drawn again
      this.draw(angle);
      const all = new Uint8Array(4 * cv.width * cv.height);
      gl.readPixels(0, 0, cv.width, cv.height, gl.RGBA, gl.UNSIGNED_BYTE, all);
      let k = 0; for (let i = 3; i < all.length; i += 4) if (all[i]) k++;
      return k;
    },
  };
}

// script draws the cloud with the explorer's own every-row drawing
// (points.js): a turn is a new affine map, each row projected in script.
async function script() {
  const { createPoints } = await import("/static/views/explorer/points.js");
  const P = createPoints(cv), box = { l: 0, t: 0, r: 720, b: 560 }, scale = { lo: 0, hi: 1, bins: 24 };
  const viewAt = (angle) => {
    const c = Math.cos(angle), sn = Math.sin(angle);
    return { dims: [0, 1, 2], box, px: [360 * c, -360 * sn, 0, 360], py: [-140 * sn, -140 * c, -224, 280] };
  };
  return {
    draw(angle) { P.draw(720, 560, { mean: xyz, d: 3, n, v: val }, [viewAt(angle)], scale); },
    wait() {},
    ink() {
      const over = document.querySelector("canvas.rv-points"), px = over.getContext("2d").getImageData(0, 0, over.width, over.height).data;
      let k = 0; for (let i = 3; i < px.length; i += 4) if (px[i]) k++;
      return k;
    },
  };
}

window.floor = (ms) => ready.then((view) => new Promise((resolve) => {
  const gaps = [], waits = []; let frames = 0, last = 0, angle = 0; const t0 = performance.now();
  const tick = (now) => {
    if (frames > 0) gaps.push(now - last);
    last = now;
    if (now - t0 < ms) {
      frames++; angle += 0.01;
      const d0 = performance.now(); view.draw(angle);
      if (frames % 4 === 0) { view.wait(); waits.push(performance.now() - d0); }
      requestAnimationFrame(tick); return;
    }
    resolve([frames / ((now - t0) / 1000), med(gaps), med(waits), view.ink(angle)]);
  };
  requestAnimationFrame(tick);
}));
</script>`

// BenchmarkBrowserPoints measures, with nothing else on the page, what
// drawing 100,000 points at every animation frame costs in headless
// Chromium on this machine: with the explorer's script (points.js), and
// with WebGL, which here is SwiftShader's software rasteriser (no GPU) —
// the floor under the explorer's frame rate at 100,000 rows, set apart
// from the page's other work (docs/measurements.md). Each variant draws
// for 3 s whatever b.N is (-benchtime=1x) and reports frames a second,
// the median interval between frames and the draw's own median time.
func BenchmarkBrowserPoints(b *testing.B) {
	exe := browsertest.Find()
	if exe == "" {
		b.Skip("no Chromium found (apt-get install chromium, or set CHROME_PATH)")
	}
	mux := http.NewServeMux()
	mux.Handle("/static/", http.StripPrefix("/static/", http.FileServerFS(static.FS)))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, pointsPage) })
	hs := httptest.NewServer(mux)
	defer hs.Close()
	for _, v := range []struct {
		name         string
		n, size      int
		round, blend bool
		script       bool // points.js, not WebGL
	}{
		{"nothing", 0, 2, true, true, false},
		{"script-100k", 100_000, 2, false, false, true},
		{"script-1M", 1_000_000, 2, false, false, true},
		{"webgl-as-before-100k", 100_000, 2, true, true, false},
		{"webgl-square-2px-opaque-100k", 100_000, 2, false, false, false},
		{"webgl-square-1px-opaque-100k", 100_000, 1, false, false, false},
	} {
		b.Run(v.name, func(b *testing.B) {
			ctx := browserTab(b, exe, 800, 640)
			q := url.Values{"n": {fmt.Sprint(v.n)}, "size": {fmt.Sprint(v.size)}, "round": {b2s(v.round)}, "blend": {b2s(v.blend)}, "script": {b2s(v.script)}}
			for range b.N {
				if _, err := chromedp.Run(ctx, chromedp.Navigate(hs.URL+"/#"+q.Encode())); err != nil {
					b.Fatal(err)
				}
				r, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`window.floor(3000)`, chromedp.EvalAwaitPromise))
				if err != nil {
					b.Fatal(err)
				}
				if v.n > 0 && r[3] < 1000 {
					b.Fatalf("%d points inked %v pixels: not drawn", v.n, r[3])
				}
				b.ReportMetric(r[0], "frames/s")
				b.ReportMetric(r[1], "ms/frame")
				b.ReportMetric(r[2], "draw-ms")
			}
		})
	}
}

func b2s(v bool) string {
	if v {
		return "1"
	}
	return "0"
}
