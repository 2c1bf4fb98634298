// Canvas helpers: device-pixel-ratio sizing, scales, nice ticks, axes.
import { viridis } from "./colormap.js";

// One hue per meaning, across every panel (and the downloaded figures):
// blue the Gaussian messages and functions, red the inducing variables u
// (the paper's and the message figure's red bars; the handles ◆), black
// and grey what sampling finds (the data, the Monte Carlo densities, as in
// the message figure), sky KL, amber compression, violet propagation,
// green the likelihood.
export const C = {
  ink: "#1f2933",
  muted: "#6b7785",
  grid: "#e6e9ee",
  axis: "#9aa5b1",
  mean: "#1d4ed8",
  band: "rgba(37, 99, 235, 0.22)",
  band2: "rgba(37, 99, 235, 0.09)",
  handle: "#d62728",
  handleHot: "#a11d1e",
  data: "#111827",
  kl: "#0ea5e9",
  comp: "#f59e0b",
  prop: "#8b5cf6",
  lik: "#047857",
  bound: "#111827",
  density: [55, 65, 81], // Monte Carlo densities (rgb; alpha by density): the truth by sampling
  mc: "#111827",         // a Monte Carlo density's line
  path: "rgba(194, 65, 12, 0.75)", // sample paths through every layer
};

// colormap is the page's one perceptual colour map (viridis, colormap.js)
// as a CSS colour, for datum order, t in [0, 1].
export function colormap(t, a = 1) {
  const c = viridis(t);
  return `rgba(${c[0]},${c[1]},${c[2]},${a})`;
}

// niceTicks returns about n round numbers in [lo, hi], and at least two.
export function niceTicks(lo, hi, n = 5) {
  if (!isFinite(lo) || !isFinite(hi) || hi <= lo) return [lo];
  const raw = (hi - lo) / n;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const steps = [0.5, 1, 2, 2.5, 5, 10].map((m) => m * mag);
  let k = steps.findIndex((s) => s >= raw);
  if (k < 0) k = steps.length - 1;
  for (;; k--) {
    const step = steps[k], out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    // at least two ticks, so that an axis has a scale (a narrow plot of a
    // wide range asks for two or three, and its round step may leave one)
    if (out.length >= 2 || k === 0) return out;
  }
}

export function fmt(v) {
  if (!isFinite(v)) return "–";
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(1);
  return Number(v.toPrecision(4)).toString();
}

// columnDecimals is one precision for a table's column of values: the
// decimals that give the largest sig significant digits, up to extra more
// (6 in all) where two values that differ would read the same (extra 0
// for a column whose small differences mean nothing, as times). fixed
// writes a value at it ("3.970", not fmt's "3.97" beside "3.969").
export function columnDecimals(values, sig = 4, extra = 3) {
  const vs = values.filter((v) => v != null && isFinite(v));
  const top = Math.max(0, ...vs.map(Math.abs));
  let d = top > 0 ? Math.min(6, Math.max(0, sig - 1 - Math.floor(Math.log10(top)))) : 0;
  const most = Math.min(6, d + extra);
  const alike = () => vs.some((a, i) => vs.some((b, j) => j > i && a !== b && fixed(a, d) === fixed(b, d)));
  while (d < most && alike()) d++;
  return d;
}
export function fixed(v, d) {
  if (v == null || !isFinite(v)) return "–";
  return v.toLocaleString("en", { minimumFractionDigits: d, maximumFractionDigits: d });
}

// fmtBound writes a bound for the page's card: as fmt, but a large one
// (the Frey faces' -1,104,352) in whole nats with thousands separators,
// whose last digits move as it climbs (-1.1e+6 stood still).
export function fmtBound(v) {
  if (!isFinite(v) || Math.abs(v) < 1e5) return fmt(v);
  return Math.round(v).toLocaleString("en");
}

// tickLabel formats a tick at the given spacing: as many decimals as the
// spacing needs (so neighbouring ticks never read the same), a true minus
// sign (−), and exponents for very large or small numbers.
export function tickLabel(v, step) {
  const a = Math.abs(v);
  // the decimals that write multiples of s exactly
  const decimals = (s) => {
    let d = 0;
    while (d < 6 && Math.abs(Math.round(s * 10 ** d) - s * 10 ** d) > 1e-6 * s * 10 ** d) d++;
    return d;
  };
  let txt;
  // in exponent form, as many mantissa decimals as the step needs
  // (−1.105e6 between −1.080e6 and −1.130e6, not −1.10e6)
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) txt = v.toExponential(Math.max(1, decimals(step / 10 ** Math.floor(Math.log10(a)))));
  else txt = v.toFixed(decimals(step));
  return txt.replace("e+", "e").replace(/-/g, "−"); // 1.26e6: the plus sign only costs room
}
const stepOf = (t) => (t.length > 1 ? Math.abs(t[1] - t[0]) : 1);

// withUnit labels an axis or a quantity with its unit: "x_time (s)", or the
// name alone when the data name none.
export function withUnit(name, unit) {
  return unit ? `${name} (${unit})` : name;
}

// Identity axis units; unitsOf(mean, scale) shows model units in original units.
export const identity = { to: (v) => v, from: (v) => v };
export function unitsOf(mean, scale) {
  return { to: (v) => v * scale + mean, from: (v) => (v - mean) / scale };
}

// A range that grows at once and shrinks slowly, so live axes do not jitter.
export class StickyRange {
  constructor() { this.lo = NaN; this.hi = NaN; }
  update(lo, hi, frozen = false) {
    if (!isFinite(lo) || !isFinite(hi)) return;
    if (hi - lo < 1e-9) { lo -= 0.5; hi += 0.5; }
    if (!isFinite(this.lo)) { this.lo = lo; this.hi = hi; return; }
    if (frozen) return;
    const span = hi - lo;
    this.lo = lo < this.lo ? lo : this.lo + 0.08 * (lo - this.lo);
    this.hi = hi > this.hi ? hi : this.hi + 0.08 * (hi - this.hi);
    if (this.hi - this.lo > 40 * span) { this.lo = lo; this.hi = hi; }
  }
  reset() { this.lo = NaN; this.hi = NaN; }
}

// The page's drawing scale (presentation mode's font-scale control): every
// canvas draws in logical pixels that are this many CSS pixels, so type,
// strokes and marks grow together for the back of a lecture hall.
let drawScale = 1;
export function setDrawScale(f) { drawScale = Math.min(3, Math.max(0.5, f)); }
export function getDrawScale() { return drawScale; }

// canvasPoint returns an event's position on canvas in the plots' logical
// pixels; clientPoint turns logical pixels back into client coordinates.
export function canvasPoint(canvas, ev) {
  const r = canvas.getBoundingClientRect();
  return [(ev.clientX - r.left) / drawScale, (ev.clientY - r.top) / drawScale];
}
export function clientPoint(canvas, x, y) {
  const r = canvas.getBoundingClientRect();
  return [r.left + x * drawScale, r.top + y * drawScale];
}

// canvasSize is a canvas's CSS size ({width, height}) as a ResizeObserver
// last reported it (read once, on first use, from the layout). Reading it
// from the layout in every draw (getBoundingClientRect) forces the page's
// layout whenever text changed since the last read: several times a frame
// while streaming, 1.6 ms a frame in the robot view's profile. A change of
// size calls the handler set by onCanvasResize (the app redraws).
const sizes = new WeakMap();
let resized = () => {};
const sizeObserver = new ResizeObserver((entries) => {
  for (const e of entries) {
    const b = e.borderBoxSize?.[0];
    sizes.set(e.target, b ? { width: b.inlineSize, height: b.blockSize } : { width: e.contentRect.width, height: e.contentRect.height });
  }
  resized();
});
export function canvasSize(canvas) {
  let s = sizes.get(canvas);
  if (!s) {
    const r = canvas.getBoundingClientRect();
    sizes.set(canvas, (s = { width: r.width, height: r.height }));
    sizeObserver.observe(canvas);
  }
  return s;
}
export function onCanvasResize(fn) { resized = fn; }

const FONT = "12px system-ui, -apple-system, 'Segoe UI', sans-serif";

// Plot wraps one canvas: call begin() each draw, then use sx/sy.
export class Plot {
  constructor(canvas, margin = { l: 56, r: 14, t: 10, b: 40 }) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.m = margin;
    this.w = 0; this.h = 0;
  }

  // begin sizes the backing store to the CSS size × devicePixelRatio and
  // clears it (unless clear is false: a view that replaces its pixels
  // itself). It returns false when the canvas is not visible.
  begin(clear = true) {
    const r = canvasSize(this.canvas);
    const dpr = window.devicePixelRatio || 1;
    const W = Math.max(1, Math.round(r.width * dpr)), H = Math.max(1, Math.round(r.height * dpr));
    if (this.canvas.width !== W || this.canvas.height !== H) {
      this.canvas.width = W; this.canvas.height = H;
    }
    const f = drawScale;
    this.w = r.width / f; this.h = r.height / f;
    const ctx = this.ctx;
    ctx.setTransform(dpr * f, 0, 0, dpr * f, 0, 0);
    if (clear) ctx.clearRect(0, 0, this.w, this.h);
    // What text() and mark() drew, in the canvas's CSS pixels: the page's
    // tests check that no label leaves its canvas or covers another label
    // or a mark.
    this.canvas.drawn = { labels: [], marks: [] };
    // setting a font resolves it against the canvas's style (0.4 ms a
    // frame across the robot views while streaming): only when changed
    if (ctx.font !== this.font) { ctx.font = FONT; this.font = ctx.font; }
    return r.width > 0 && r.height > 0;
  }

  // area sets the data ranges and the pixel box (defaults: margins). With
  // equal, a unit is as long on both axes: the ranges grow about their
  // centres to fill the box. It returns the scale {box, x0, x1, y0, y1,
  // sx, sy, ix, iy}, which stays valid after a later area() on the same
  // canvas (one canvas can hold several plots side by side).
  area(x0, x1, y0, y1, box, { equal = false } = {}) {
    const b = box || { l: this.m.l, r: this.w - this.m.r, t: this.m.t, b: this.h - this.m.b };
    if (x1 === x0) { x0 -= 0.5; x1 += 0.5; }
    if (y1 === y0) { y0 -= 0.5; y1 += 0.5; }
    let kx = (b.r - b.l) / (x1 - x0), ky = (b.b - b.t) / (y1 - y0);
    if (equal) {
      const k = Math.min(kx, ky), cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
      kx = ky = k;
      x0 = cx - (b.r - b.l) / (2 * k); x1 = cx + (b.r - b.l) / (2 * k);
      y0 = cy - (b.b - b.t) / (2 * k); y1 = cy + (b.b - b.t) / (2 * k);
    }
    const s = {
      box: b, x0, x1, y0, y1,
      sx: (x) => b.l + (x - x0) * kx,
      sy: (y) => b.b - (y - y0) * ky,
      ix: (px) => x0 + (px - b.l) / kx,
      iy: (py) => y0 + (b.b - py) / ky,
    };
    Object.assign(this, s);
    return s;
  }

  // axes draws grid lines, ticks and labels. ux/uy convert model units to
  // the units shown (identity or unitsOf). The axis titles go at the
  // canvas's bottom and left edges unless xlabelAt (the x title's
  // baseline) or ylabelAt (the y title's centre) place them, as when one
  // canvas holds several plots.
  axes({ xlabel = "", ylabel = "", ux = identity, uy = identity, xgrid = true, ygrid = true, bottom, xlabelAt, ylabelAt } = {}) {
    const { ctx, box } = this;
    const yb = bottom ?? box.b;
    ctx.save();
    ctx.lineWidth = 1;
    const xt = this.xTicks(ux);
    const yt = niceTicks(Math.min(uy.to(this.y0), uy.to(this.y1)), Math.max(uy.to(this.y0), uy.to(this.y1)), Math.max(2, Math.floor((box.b - box.t) / 45)));
    const ys = stepOf(yt);
    ctx.strokeStyle = C.grid;
    ctx.fillStyle = C.muted;
    ctx.textBaseline = "top";
    for (const t of xt) {
      if (xgrid) { ctx.beginPath(); ctx.moveTo(t.px, box.t); ctx.lineTo(t.px, box.b); ctx.stroke(); }
      if (t.label) { ctx.textAlign = t.align; this.text(t.label, t.at, yb + 5); }
    }
    ctx.textAlign = "right"; ctx.textBaseline = "middle";
    // Labels that would not fit in the left margin (beside the axis title)
    // get a smaller font rather than losing their first characters, the
    // minus sign among them.
    const room = box.l - 6 - (ylabel ? 22 : 2);
    const widest = Math.max(0, ...yt.map((t) => ctx.measureText(tickLabel(t, ys)).width));
    ctx.save();
    if (widest > room) ctx.font = ctx.font.replace(/^\d+(\.\d+)?px/, `${Math.max(7, (12 * room) / widest).toFixed(1)}px`);
    for (const t of yt) {
      const py = Math.round(this.sy(uy.from(t))) + 0.5;
      if (py < box.t - 1 || py > box.b + 1) continue;
      if (ygrid) { ctx.beginPath(); ctx.moveTo(box.l, py); ctx.lineTo(box.r, py); ctx.stroke(); }
      this.text(tickLabel(t, ys), box.l - 6, py);
    }
    ctx.restore();
    ctx.strokeStyle = C.axis;
    ctx.beginPath();
    ctx.moveTo(box.l + 0.5, box.t); ctx.lineTo(box.l + 0.5, box.b + 0.5); ctx.lineTo(box.r, box.b + 0.5);
    ctx.stroke();
    ctx.fillStyle = C.ink;
    ctx.textAlign = "center"; ctx.textBaseline = "bottom";
    if (xlabel) {
      // A title wider than the canvas (narrow panels at a large type
      // scale) gets a smaller font rather than losing its ends.
      const cx = (box.l + box.r) / 2, room = 2 * Math.min(cx, this.w - cx) - 4, wide = ctx.measureText(xlabel).width;
      ctx.save();
      if (wide > room) ctx.font = ctx.font.replace(/^\d+(\.\d+)?px/, `${Math.max(7, (12 * room) / wide).toFixed(1)}px`);
      this.text(xlabel, cx, xlabelAt ?? this.h - 3);
      ctx.restore();
    }
    if (ylabel) {
      // A title longer than the canvas is high (a long output name) gets
      // a smaller font rather than losing its ends, as the x title.
      const cy = (box.t + box.b) / 2, room = 2 * Math.min(cy, this.h - cy) - 4, wide = ctx.measureText(ylabel).width;
      if (wide > room) ctx.font = ctx.font.replace(/^\d+(\.\d+)?px/, `${Math.max(7, (12 * room) / wide).toFixed(1)}px`);
      ctx.translate(ylabelAt ?? 13, cy);
      ctx.rotate(-Math.PI / 2);
      ctx.textBaseline = "middle";
      this.text(ylabel, 0, 0);
    }
    ctx.restore();
  }

  // xTicks chooses the x axis's ticks from the room their labels need:
  // the most round ticks (one per 80 px at most) whose labels, in the
  // current font, keep a gap of half a label's height between them; a
  // label that would leave the canvas is moved inside it, to end at the
  // edge (a narrow plot's last tick is often at its edge). If even two
  // ticks' labels would touch, every other label is left out (its grid
  // line stays). Each tick: {px, label, at, align} ("" for no label).
  xTicks(ux) {
    const { ctx, box } = this;
    const lo = ux.to(Math.min(this.x0, this.x1)), hi = ux.to(Math.max(this.x0, this.x1));
    const gap = 0.5 * Number(/([\d.]+)px/.exec(ctx.font)?.[1] ?? 12); // half the font's size
    const place = (vals) => {
      const step = stepOf(vals), out = [];
      for (const v of vals) {
        const px = Math.round(this.sx(ux.from(v))) + 0.5;
        if (px < box.l - 1 || px > box.r + 1) continue;
        const label = tickLabel(v, step), half = ctx.measureText(label).width / 2;
        let at = px, align = "center";
        if (px - half < 1) { at = 1; align = "left"; } else if (px + half > this.w - 1) { at = this.w - 1; align = "right"; }
        const l = align === "left" ? at : align === "right" ? at - 2 * half : at - half;
        out.push({ px, label, at, align, l, r: l + 2 * half });
      }
      return out;
    };
    const clear = (ts) => ts.every((t, i) => i === 0 || t.l - ts[i - 1].r >= gap);
    let ts = [];
    for (let n = Math.max(2, Math.floor((box.r - box.l) / 80)); n >= 2; n--) {
      ts = place(niceTicks(lo, hi, n));
      if (clear(ts)) return ts;
    }
    // The fewest round ticks still crowd: label every other one (those
    // left keep their gap, as the labels are about as wide as each other).
    for (let i = 1; i < ts.length; i += 2) ts[i].label = "";
    return ts;
  }

  // text draws str at (x, y) in the context's font, alignment and
  // transform, and records its box (canvas.drawn.labels).
  text(str, x, y) {
    const ctx = this.ctx, m = ctx.measureText(str);
    ctx.fillText(str, x, y);
    this.record(this.canvas.drawn?.labels, x - m.actualBoundingBoxLeft, y - m.actualBoundingBoxAscent, x + m.actualBoundingBoxRight, y + m.actualBoundingBoxDescent, str);
  }

  // mark records a drawn rectangle that labels must not cover
  // (canvas.drawn.marks).
  mark(l, t, r, b) { this.record(this.canvas.drawn?.marks, l, t, r, b, ""); }

  record(list, l, t, r, b, text) {
    if (!list) return;
    const M = this.ctx.getTransform(), k = 1 / (window.devicePixelRatio || 1);
    const ps = [[l, t], [r, t], [l, b], [r, b]].map(([x, y]) => M.transformPoint(new DOMPoint(x, y)));
    const xs = ps.map((p) => p.x * k), ys = ps.map((p) => p.y * k);
    list.push({ text, l: Math.min(...xs), t: Math.min(...ys), r: Math.max(...xs), b: Math.max(...ys) });
  }

  clip(fn) {
    const { ctx, box } = this;
    ctx.save();
    ctx.beginPath();
    ctx.rect(box.l, box.t, box.r - box.l, box.b - box.t);
    ctx.clip();
    fn(ctx);
    ctx.restore();
  }

  // band fills between lo(i) and hi(i) at x(i), i < n.
  band(n, x, lo, hi, fill) {
    const ctx = this.ctx;
    ctx.beginPath();
    for (let i = 0; i < n; i++) ctx.lineTo(this.sx(x(i)), this.sy(hi(i)));
    for (let i = n - 1; i >= 0; i--) ctx.lineTo(this.sx(x(i)), this.sy(lo(i)));
    ctx.closePath();
    ctx.fillStyle = fill;
    ctx.fill();
  }

  line(n, x, y, stroke, width = 2, dash = []) {
    const ctx = this.ctx;
    ctx.beginPath();
    for (let i = 0; i < n; i++) ctx.lineTo(this.sx(x(i)), this.sy(y(i)));
    ctx.strokeStyle = stroke;
    ctx.lineWidth = width;
    ctx.setLineDash(dash);
    ctx.stroke();
    ctx.setLineDash([]);
  }
}

// legend fills el with swatches: items [{label, short, color, kind:
// "line"|"band"|"dot"|"diamond"|…}]. short is the compact label that
// presentation mode shows (style.css), so that every panel keeps its
// legend on one line; without it the label serves both.
export function legend(el, items) {
  const key = JSON.stringify(items);
  if (el.dataset.key === key) return;
  el.dataset.key = key;
  el.replaceChildren(...items.map((it) => {
    const s = document.createElement("span");
    s.className = "item";
    const sw = document.createElement("i");
    sw.className = "sw " + (it.kind || "band");
    sw.style.setProperty("--c", it.color);
    s.append(sw);
    if (it.short && it.short !== it.label) {
      const long = document.createElement("span"), short = document.createElement("span");
      long.className = "long"; long.textContent = it.label;
      short.className = "short"; short.textContent = it.short;
      s.append(long, short);
    } else s.append(document.createTextNode(it.label));
    return s;
  }));
}
