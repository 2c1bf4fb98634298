// Every row of a large data set, fetched while the fit is paused
// (scale.js), drawn as squares of 2 CSS pixels a side (devicePixelRatio
// times as many device pixels): each row's place is projected in script
// straight into the 32-bit pixels of an ImageData, which is put in one
// copy on a 2-D canvas laid over the view's canvas (above the density,
// the axes and the sample's marks; it takes no pointer events).
//
// Why not WebGL, which drew them before: where Chromium has no GPU (CI,
// headless browsers, remote desktops), WebGL is SwiftShader, a CPU
// rasteriser that sets up every point as a primitive, and 100,000 points
// cost it tens to hundreds of times this loop and copy, however small the
// point and without blending (BenchmarkBrowserPoints in web/; the
// numbers are in docs/measurements.md, "The explorer's frame rate"). The
// loop costs the same with a GPU, and it needs no WebGL at all.
//
// A frame's draw is skipped when nothing it shows changed (the same rows,
// colours and maps): turning one layer's 3-D view redraws only that view.
import { paletteRGB } from "../../colormap.js";

// pointStats counts the draws, the points drawn and the draws skipped as
// unchanged (for tests).
export const pointStats = { draws: 0, points: 0, skipped: 0 };

// createPoints lays a canvas over the view's canvas cv (in a positioned
// parent) and returns {draw, clear}.
export function createPoints(cv) {
  let c = null; // {canvas, ctx, img, pix}
  let shown = null; // what the canvas shows: {mean, v, key}
  let colours = null; // each row's colour and the alpha table: {v, key, px, over}
  return {
    // draw draws rows 0 … n − 1 of a layer's means (mean: n × d float32)
    // in each view of views ({dims: three of the layer's dimensions, px,
    // py: [c₁, c₂, c₃, c₀], a row's place in CSS pixels of the w × h plot
    // being c₀ + Σ cₖ·x_dimsₖ, box: where to draw}), coloured by their
    // values v (n float32) on the colour scale ({lo, hi, bins}); faint when the sample's lit rows must show through. It returns
    // whether it drew (false: no 2-D canvas).
    draw(w, h, { mean, d, n, v }, views, scale, faint = false) {
      const t0 = performance.now();
      const W = cv.width, H = cv.height, k = W / w; // device px per CSS px
      if (!c) {
        const canvas = document.createElement("canvas");
        canvas.className = "rv-points";
        const ctx = canvas.getContext("2d");
        if (!ctx) return false;
        cv.after(canvas);
        c = { canvas, ctx, img: null, pix: null };
      }
      c.canvas.hidden = false;
      if (c.canvas.width !== W || c.canvas.height !== H || !c.img) {
        c.canvas.width = W; c.canvas.height = H;
        c.img = c.ctx.createImageData(W, H); c.pix = new Uint32Array(c.img.data.buffer);
        shown = null;
      }
      const alpha = faint ? 31 : 140; // of 255: 0.12 and 0.55
      const ckey = `${n}|${scale.lo}|${scale.hi}|${scale.bins}|${alpha}`;
      if (colours?.v !== v || colours.key !== ckey) colours = { v, key: ckey, px: rowPixels(v, n, scale), over: sourceOver(alpha) };
      const key = `${W}|${H}|${w}|${d}|${ckey}|` + views.map(({ dims, px, py, box }) => [dims, px, py, box.l, box.t, box.r, box.b].join()).join("|");
      if (shown && shown.mean === mean && shown.v === v && shown.key === key) { pointStats.skipped++; return true; }
      const pix = c.pix, col = colours.px, over = colours.over, s = Math.max(1, Math.round(2 * k)), half = s / 2;
      pix.fill(0);
      for (const { dims, px, py, box } of views) {
        // CSS px → device px, shifted so that a point's square is centred on its place
        const [i0, i1, i2] = dims;
        const a0 = k * px[0], a1 = k * px[1], a2 = k * px[2], a3 = k * px[3] - half;
        const b0 = k * py[0], b1 = k * py[1], b2 = k * py[2], b3 = k * py[3] - half;
        const x0 = Math.max(0, Math.floor(box.l * k)), x1 = Math.min(W, Math.ceil(box.r * k)) - s + 1;
        const y0 = Math.max(0, Math.floor(box.t * k)), y1 = Math.min(H, Math.ceil(box.b * k)) - s + 1;
        for (let i = 0, o = 0; i < n; i++, o += d) {
          const m0 = mean[o + i0], m1 = mean[o + i1], m2 = mean[o + i2];
          const X = a0 * m0 + a1 * m1 + a2 * m2 + a3, Y = b0 * m0 + b1 * m1 + b2 * m2 + b3;
          if (!(X >= x0 && X < x1 && Y >= y0 && Y < y1)) continue; // NaN too
          const rgb = col[i];
          for (let dy = 0, p = (Y | 0) * W + (X | 0); dy < s; dy++, p += W) {
            for (let q = p; q < p + s; q++) pix[q] = over[pix[q] >>> 24] | rgb;
          }
        }
      }
      c.ctx.putImageData(c.img, 0, 0);
      shown = { mean, v, key };
      pointStats.draws++; pointStats.points += n * views.length;
      performance.measure("explorer-points", { start: t0, end: performance.now() });
      return true;
    },
    // clear hides the points (the view shows the sample alone).
    clear() { if (c) c.canvas.hidden = true; },
  };
}

// rowPixels is each row's colour as a pixel without alpha (ImageData's
// byte order, little-endian: blue, green, red from the high byte): its
// value's bin of the page's colour scale (colour.js: bins cut lo…hi
// evenly, bin k painted palette[k]).
function rowPixels(v, n, { lo, hi, bins }) {
  const pal = paletteRGB(bins).map(([r, g, b]) => (b << 16) | (g << 8) | r);
  const out = new Uint32Array(n), f = bins / (hi - lo);
  for (let i = 0; i < n; i++) {
    const b = Math.floor((v[i] - lo) * f);
    out[i] = pal[b > 0 ? (b < bins ? b : bins - 1) : 0];
  }
  return out;
}

// sourceOver is, for each alpha of a pixel (of 255), the alpha byte after
// a point of alpha a is drawn over it, as "source-over" builds it
// (a + (255 − a)·α/255, rounded), in place: the colour is the latest
// point's.
function sourceOver(a) {
  const t = new Uint32Array(256);
  for (let u = 0; u < 256; u++) t[u] = ((u + Math.round(((255 - u) * a) / 255)) << 24) >>> 0;
  return t;
}
