package web

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"
)

// glFloorPage is a bare page that draws n points with WebGL 1 at every
// animation frame, as the explorer's every-row view does (static/views/
// explorer/gl.js): the points uploaded once, a turn set by uniforms only.
// Its knobs (the query) are the costs a frame can shed: size (the point's
// side in device pixels), round (discard outside the disc), blend (alpha
// blending) and n. window.floor(ms) draws for ms milliseconds and returns
// [frames a second, the median interval between frames (ms), the median
// time of the draw itself, waited for with a one-pixel readPixels (ms),
// the inked pixels of the last frame].
const glFloorPage = `<!doctype html><meta charset="utf-8"><body style="margin:0">
<canvas id="c" style="width:720px;height:560px"></canvas>
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
const view = q.get("splat") === "1" ? splat() : webgl();

// webgl draws the cloud as gl.js does: uploaded once, turned by a uniform.
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

// splat draws the cloud without WebGL: projected in script into 32-bit
// pixels (squares of size, opaque), put on a 2-D canvas.
function splat() {
  const ctx = cv.getContext("2d"), W = cv.width, H = cv.height, img = ctx.createImageData(W, H), pix = new Uint32Array(img.data.buffer);
  const col = new Uint32Array(n);
  for (let i = 0; i < n; i++) col[i] = 0xff000000 | (Math.round(255 * (1 - val[i])) << 16) | (102 << 8) | Math.round(255 * val[i]);
  return {
    draw(angle) {
      const c = Math.cos(angle), sn = Math.sin(angle), hw = W / 2, hh = H / 2;
      pix.fill(0);
      for (let i = 0; i < n; i++) {
        const x = xyz[3 * i], y = xyz[3 * i + 1], z = xyz[3 * i + 2];
        const px = (hw + hw * (c * x - sn * y)) | 0, py = (hh - hh * (0.5 * (sn * x + c * y) + 0.8 * z)) | 0;
        if (px < 0 || py < 0 || px >= W - size || py >= H - size) continue;
        const o = py * W + px, k = col[i];
        pix[o] = k; if (size > 1) { pix[o + 1] = k; pix[o + W] = k; pix[o + W + 1] = k; }
      }
      ctx.putImageData(img, 0, 0);
    },
    wait() {},
    ink() { let k = 0; for (let i = 0; i < pix.length; i++) if (pix[i]) k++; return k; },
  };
}

window.floor = (ms) => new Promise((resolve) => {
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
});
</script>`

// BenchmarkBrowserWebGLFloor measures what headless Chromium's software
// WebGL (SwiftShader, no GPU) costs to draw 100,000 points at every
// animation frame on this machine, with nothing else on the page: the
// floor under the explorer's frame rate at 100,000 rows
// (docs/measurements.md). It reports frames a second and the draw's own
// time per variant; each runs 3 s whatever b.N is (-benchtime=1x).
func BenchmarkBrowserWebGLFloor(b *testing.B) {
	exe := findBrowser()
	if exe == "" {
		b.Skip("no Chromium found (apt-get install chromium, or set CHROME_PATH)")
	}
	for _, v := range []struct {
		name         string
		n, size      int
		round, blend bool
		splat        bool // no WebGL: projected in script, put on a 2-D canvas
	}{
		{"none", 0, 2, true, true, false},
		{"as-explorer", 100_000, 2, true, true, false},
		{"square-2px-opaque", 100_000, 2, false, false, false},
		{"square-1px-opaque", 100_000, 1, false, false, false},
		{"splat-2px", 100_000, 2, false, false, true},
		{"splat-1px", 100_000, 1, false, false, true},
	} {
		b.Run(v.name, func(b *testing.B) {
			ctx := startBrowser(b, exe, 800, 640)
			q := url.Values{"n": {fmt.Sprint(v.n)}, "size": {fmt.Sprint(v.size)}, "round": {b2s(v.round)}, "blend": {b2s(v.blend)}, "splat": {b2s(v.splat)}}
			for range b.N {
				if _, err := chromedp.Run(ctx, chromedp.Navigate("data:text/html,"+url.PathEscape(glFloorPage)+"#"+q.Encode())); err != nil {
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
