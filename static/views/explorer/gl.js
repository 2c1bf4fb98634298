// Points drawn with WebGL where Canvas 2D cannot hold the frame rate:
// every row of a large data set, fetched while the fit is paused
// (scale.js). Each latent view gets a WebGL canvas laid over its Canvas 2D
// (above the density, the axes and the sample's marks; it takes no
// pointer events): the page's thread only issues the draw, and the points
// are rasterised and composited off it — copying the picture back into
// the 2D canvas (measured first) made every draw wait for the
// rasteriser, 170 ms at 300,000 points in headless Chromium's software
// GL. A row's position is read on the GPU from the layer's means as
// fetched (one buffer per layer, its dimensions picked by stride and
// offset), so a frame uploads nothing.
//
// Plain WebGL 1, not a library: regl (measured first) compiles its
// commands with new Function, which the page's Content-Security-Policy
// (script-src 'self', no 'unsafe-eval') forbids; one program of two
// shaders needs no more than the lines here.
import { paletteRGB } from "../../colormap.js";

// a row's colour: its value's bin of the page's colour scale (colour.js:
// bins cut lo…hi evenly, bin k painted palette[k]), looked up per vertex
// a view's place of a row: an affine map of three of its dimensions to
// clip space (a pair of a 2-D view uses two of them, the 3-D view all three)
const VERT = `precision highp float;
attribute float x, y, z, v; uniform vec4 mx, my; uniform float size, lo, hi, bins; uniform vec3 pal[24]; varying vec3 vc;
void main() {
  vc = pal[int(clamp(floor((v - lo) / (hi - lo) * bins), 0.0, bins - 1.0))];
  vec4 p = vec4(x, y, z, 1.0);
  gl_Position = vec4(dot(mx, p), dot(my, p), 0.0, 1.0); gl_PointSize = size;
}`;
const FRAG = `precision mediump float; varying vec3 vc; uniform float alpha;
void main() { vec2 d = gl_PointCoord - 0.5; if (dot(d, d) > 0.25) discard; gl_FragColor = vec4(vc * alpha, alpha); }`;

// glStats counts the draws and the points drawn (for tests).
export const glStats = { draws: 0, points: 0 };

// available says whether WebGL draws here.
let probe;
export const available = () => (probe ??= !!document.createElement("canvas").getContext("webgl"));

// make sets up WebGL on canvas; it throws when the shaders fail.
function make(canvas) {
  const gl = canvas.getContext("webgl", { antialias: false, premultipliedAlpha: true });
  if (!gl) return null;
  const shader = (type, src) => {
    const s = gl.createShader(type);
    gl.shaderSource(s, src); gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
    return s;
  };
  const p = gl.createProgram();
  gl.attachShader(p, shader(gl.VERTEX_SHADER, VERT)); gl.attachShader(p, shader(gl.FRAGMENT_SHADER, FRAG));
  gl.linkProgram(p);
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(p));
  gl.useProgram(p);
  const at = Object.fromEntries(["x", "y", "z", "v"].map((n) => [n, gl.getAttribLocation(p, n)]));
  const u = Object.fromEntries(["mx", "my", "size", "alpha", "lo", "hi", "bins", "pal"].map((n) => [n, gl.getUniformLocation(p, n)]));
  for (const a of Object.values(at)) gl.enableVertexAttribArray(a);
  gl.enable(gl.BLEND); gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA); gl.enable(gl.SCISSOR_TEST);
  return { canvas, gl, at, u, buffers: new WeakMap() };
}

// bind makes arr (a Float32Array, its GPU copy made once) attribute a's
// source: every stride bytes from offset.
function bind(g, a, arr, stride, offset) {
  const gl = g.gl;
  let b = g.buffers.get(arr);
  if (!b) { b = gl.createBuffer(); gl.bindBuffer(gl.ARRAY_BUFFER, b); gl.bufferData(gl.ARRAY_BUFFER, arr, gl.STATIC_DRAW); g.buffers.set(arr, b); }
  gl.bindBuffer(gl.ARRAY_BUFFER, b);
  gl.vertexAttribPointer(a, 1, gl.FLOAT, false, stride, offset);
}

// paletteOf is the colour map's bins colours (colormap.js) as 24 RGB
// triples in 0…1 (the unused ones black).
const palettes = new Map();
function paletteOf(bins) {
  let p = palettes.get(bins);
  if (!p) {
    p = new Float32Array(72);
    paletteRGB(bins).slice(0, 24).forEach((c, k) => p.set([c[0] / 255, c[1] / 255, c[2] / 255], 3 * k));
    palettes.set(bins, p);
  }
  return p;
}

// createPoints lays a WebGL canvas over the view's canvas cv (in a
// positioned parent) and returns {draw, clear}.
export function createPoints(cv) {
  let g; // {canvas, gl, at, u, buffers}, or null: no WebGL
  const init = () => {
    if (g !== undefined) return g;
    const canvas = document.createElement("canvas");
    canvas.className = "rv-gl";
    try { g = { canvas, ...make(canvas) }; cv.after(canvas); } catch (err) { console.warn("WebGL: every row cannot be drawn:", err); g = null; }
    return g;
  };
  return {
    // draw draws rows 0 … n − 1 of a layer's means (mean: n × d float32)
    // in each view of views ({dims: three of the layer's dimensions, px,
    // py: [c₁, c₂, c₃, c₀], a row's place in CSS pixels of the w × h plot
    // being c₀ + Σ cₖ·x_dimsₖ, box: where to draw}), coloured by their
    // values v (n float32) on the colour scale ({lo, hi, bins}, bins ≤
    // 24); faint when the sample's lit rows must show through. It returns
    // false without WebGL.
    draw(w, h, { mean, d, n, v }, views, scale, faint = false) {
      if (!init()?.gl) return false;
      const t0 = performance.now();
      const gl = g.gl, W = cv.width, H = cv.height, k = W / w; // device px per CSS px
      if (g.canvas.width !== W || g.canvas.height !== H) { g.canvas.width = W; g.canvas.height = H; }
      g.canvas.hidden = false;
      gl.viewport(0, 0, W, H);
      gl.scissor(0, 0, W, H);
      gl.clearColor(0, 0, 0, 0); gl.clear(gl.COLOR_BUFFER_BIT);
      bind(g, g.at.v, v, 4, 0);
      gl.uniform1f(g.u.size, 2 * k); gl.uniform1f(g.u.alpha, faint ? 0.12 : 0.55);
      gl.uniform1f(g.u.lo, scale.lo); gl.uniform1f(g.u.hi, scale.hi); gl.uniform1f(g.u.bins, scale.bins);
      gl.uniform3fv(g.u.pal, paletteOf(scale.bins));
      for (const { dims, px, py, box } of views) {
        // CSS px → clip space
        gl.uniform4f(g.u.mx, 2 * px[0] / w, 2 * px[1] / w, 2 * px[2] / w, 2 * px[3] / w - 1);
        gl.uniform4f(g.u.my, -2 * py[0] / h, -2 * py[1] / h, -2 * py[2] / h, 1 - 2 * py[3] / h);
        gl.scissor(Math.floor(box.l * k), Math.floor(H - box.b * k), Math.ceil((box.r - box.l) * k), Math.ceil((box.b - box.t) * k));
        bind(g, g.at.x, mean, 4 * d, 4 * dims[0]);
        bind(g, g.at.y, mean, 4 * d, 4 * dims[1]);
        bind(g, g.at.z, mean, 4 * d, 4 * dims[2]);
        gl.drawArrays(gl.POINTS, 0, n);
      }
      glStats.draws++; glStats.points += n * views.length;
      performance.measure("explorer-gl", { start: t0, end: performance.now() }); // issuing the draw, not rasterising it
      return true;
    },
    // clear hides the points (the view shows the sample alone).
    clear() { if (g?.canvas) g.canvas.hidden = true; },
  };
}
