// Linked brushing and hover: the selection is the one thing the
// explorer's panels share besides the colour scale — a brushed range of
// rows (a time range: rows are in time order, training then test) and a
// hovered row. Every panel draws what it lights; panels change it only
// through the link the explorer hands them ({sel, select, hoverAt}). The
// time axes of the output and penalties views, and the ground truth's
// colour bar while it shows time, brush (wireTimeBrush).
import { canvasPoint } from "../../plot.js";
import { colorBar } from "../../colormap.js";

const BRUSH = "rgba(234,179,8,0.16)"; // a brushed time range

// selection is a value (never changed in place): rows lo…hi brushed (−1:
// none), row hover hovered (−1: none). partners(i), when given (ground
// truth with its revisits shown), are the rows a hovered row revisits:
// they light up with it. mask, when given, lights the rows where it is 1
// (a brush in a latent view, answered by the server: scale.js).
export function selection(lo = -1, hi = -1, hover = -1, partners = null, mask = null) {
  const range = lo >= 0 && hi >= lo, active = range || !!mask;
  const near = hover >= 0 && partners ? partners(hover) : [];
  return Object.freeze({
    lo, hi, hover, active, mask,
    any: active || hover >= 0, // anything lit
    key: `${lo},${hi},${hover},${!!partners},${mask ? maskKey(mask) : 0}`, // for the panels' redraw checks
    lit: (i) => (range && i >= lo && i <= hi) || (mask !== null && mask[i] === 1) || i === hover || near.includes(i),
  });
}
const masks = new WeakMap(); // a mask's number in selection keys
let maskSeq = 0;
const maskKey = (m) => { if (!masks.has(m)) masks.set(m, ++maskSeq); return masks.get(m); };

// nearestRow is the row whose time is nearest t.
function nearestRow(times, t) {
  let best = 0;
  for (let i = 1; i < times.length; i++) if (Math.abs(times[i] - t) < Math.abs(times[best] - t)) best = i;
  return best;
}

// nearestPoint is the row i < n whose (x(i), y(i)) is within 8 px of
// (px, py) and nearest, or −1.
export function nearestPoint(n, x, y, px, py) {
  let best = -1, bd = 64;
  for (let i = 0; i < n; i++) {
    const d = (x(i) - px) ** 2 + (y(i) - py) ** 2;
    if (d < bd) { bd = d; best = i; }
  }
  return best;
}

// wireTimeBrush makes a panel's time axis brush: axis() is the panel's
// last drawn {scale, bottom} (scale: a Plot.area over time; bottom: how
// far below its box a press still brushes) or null; a drag there brushes
// the rows between, a click clears the brush. Elsewhere hovering finds
// point(px, py) (a panel of points) or the row nearest in time.
export function wireTimeBrush(cv, link, times, axis, point = null) {
  let drag = null;
  const at = (e) => canvasPoint(cv, e);
  const inBrush = (a, px, py) => {
    const b = a?.scale.box;
    return !!b && b.l <= px && px <= b.r && b.t - 6 <= py && py <= (a.bottom ?? b.b + 16);
  };
  cv.addEventListener("pointerdown", (e) => {
    const [px, py] = at(e), a = axis();
    if (!inBrush(a, px, py)) return;
    const i = nearestRow(times(), a.scale.ix(px));
    drag = { from: i, moved: false, scale: a.scale };
    cv.setPointerCapture(e.pointerId);
    link.select(i, i);
  });
  cv.addEventListener("pointermove", (e) => {
    const [px, py] = at(e);
    if (drag) {
      const i = nearestRow(times(), drag.scale.ix(px));
      drag.moved ||= i !== drag.from;
      link.select(Math.min(drag.from, i), Math.max(drag.from, i));
      return;
    }
    const b = axis()?.scale.box;
    const h = point ? point(px, py) : b && b.l <= px && px <= b.r ? nearestRow(times(), axis().scale.ix(px)) : -1;
    if (h !== link.sel.hover) link.hoverAt(h);
  });
  const end = () => {
    if (drag && !drag.moved) link.select(-1, -1); // a click clears the brush
    drag = null;
  };
  cv.addEventListener("pointerup", end);
  cv.addEventListener("pointercancel", end);
  cv.addEventListener("pointerleave", () => { if (!drag && link.sel.hover >= 0) link.hoverAt(-1); });
}

// brushBand shades the brushed rows' time range (at x(i)) over the plot s.
export function brushBand(ctx, sel, s, x, nAll) {
  if (!(sel.lo >= 0 && sel.hi >= sel.lo)) return;
  const l = x(sel.lo) - 2, r = x(Math.min(sel.hi, nAll - 1)) + 2;
  ctx.fillStyle = BRUSH;
  ctx.fillRect(l, s.box.t, r - l, s.box.b - s.box.t);
}

// timeBar labels a time axis under the plot s (h: the canvas's height): the
// colour bar when the colours show time, else the title alone.
export function timeBar(ctx, colour, byTime, s, h, title) {
  if (byTime) { colorBar(ctx, s.box.l, h - 30, s.box.r - s.box.l, 9, colour.loText, colour.hiText, title); return; }
  ctx.fillStyle = "#5f6b7a"; ctx.textAlign = "center"; ctx.textBaseline = "top"; ctx.font = "11px system-ui, sans-serif";
  ctx.fillText(title, (s.box.l + s.box.r) / 2, h - 28);
}
