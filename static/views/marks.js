// Marks of scatter views drawn as Canvas 2D paths batched by colour: the
// items of one colour go into one path (many arc or ellipse subpaths)
// filled or stroked once. A view draws a few dozen paths a frame, not
// thousands, and a translucent colour is painted once where its marks
// overlap (one path, nonzero winding), so that dense halos or highlight
// rings do not darken where they pile up. Coordinates are the plot's
// (Plot.begin sets the transform); x(i), y(i) place item i; a radius is a
// number or a function of the item (r(i): a depth cue).

const TAU = 2 * Math.PI;

// discs fills a disc of radius r at every item of idx that keep accepts
// (all without keep).
export function discs(ctx, idx, x, y, r, fill, keep = null) {
  if (circles(ctx, idx, x, y, r, keep)) { ctx.fillStyle = fill; ctx.fill(); }
}

// rings draws the same circles stroked lw wide, as annuli filled (the
// circle's outer edge, and its inner edge the other way round): the same
// shape and union as a stroke, and cheaper where the canvas is drawn
// without a GPU.
export function rings(ctx, idx, x, y, r, lw, colour, keep = null) {
  if (circles(ctx, idx, x, y, r, keep, lw / 2)) { ctx.fillStyle = colour; ctx.fill(); }
}

// circles adds the circles (annuli half lw wide about them) to a new path
// and says whether there were any.
function circles(ctx, idx, x, y, r, keep, hw = 0) {
  ctx.beginPath();
  const fixed = typeof r === "number";
  let any = false;
  for (let k = 0; k < idx.length; k++) {
    const i = idx[k];
    if (keep && !keep(i)) continue;
    const px = x(i), py = y(i), rr = fixed ? r : r(i);
    ctx.moveTo(px + rr + hw, py); ctx.arc(px, py, rr + hw, 0, TAU);
    if (hw > 0 && rr > hw) { ctx.moveTo(px + rr - hw, py); ctx.arc(px, py, rr - hw, 0, TAU, true); }
    any = true;
  }
  return any;
}

// byColour draws the items keep accepts colour bin by colour bin of the
// scale (colour.js): discs, or rings lw wide (hollow).
export function byColour(ctx, scale, x, y, r, keep, { hollow = false, lw = 1.3 } = {}) {
  for (let k = 0; k < scale.bins; k++) {
    if (hollow) rings(ctx, scale.members[k], x, y, r, lw, scale.css[k], keep);
    else discs(ctx, scale.members[k], x, y, r, scale.css[k], keep);
  }
}

// rows is the items i0 … i1 − 1 in order (cached: the same array for the
// same range).
const rowCache = new Map();
export function rows(i0, i1) {
  const key = i0 * 1e7 + i1;
  let r = rowCache.get(key);
  if (!r) {
    if (rowCache.size > 64) rowCache.clear();
    r = Int32Array.from({ length: Math.max(0, i1 - i0) }, (_, k) => i0 + k);
    rowCache.set(key, r);
  }
  return r;
}

// ellipses fills axis-aligned ellipses of radii rx(i), ry(i) (items whose
// radii are null are left out): one path.
export function ellipses(ctx, idx, x, y, rx, ry, fill, keep = null) {
  ctx.beginPath();
  let any = false;
  for (let k = 0; k < idx.length; k++) {
    const i = idx[k];
    if (keep && !keep(i)) continue;
    const a = rx(i), b = ry(i);
    if (a === null) continue;
    const px = x(i), py = y(i);
    ctx.moveTo(px + a, py); ctx.ellipse(px, py, a, b, 0, 0, TAU);
    any = true;
  }
  if (any) { ctx.fillStyle = fill; ctx.fill(); }
}

// links strokes the segments i–j for ij = [i₀, j₀, i₁, j₁, …]: one path.
export function links(ctx, ij, x, y, stroke, lw) {
  if (ij.length < 2) return;
  ctx.beginPath();
  for (let k = 0; k + 1 < ij.length; k += 2) { ctx.moveTo(x(ij[k]), y(ij[k])); ctx.lineTo(x(ij[k + 1]), y(ij[k + 1])); }
  ctx.lineWidth = lw; ctx.strokeStyle = stroke; ctx.stroke();
}

// polyline strokes the line through items i0 … i1 − 1 in order.
export function polyline(ctx, i0, i1, x, y, stroke, lw) {
  if (i1 - i0 < 2) return;
  ctx.beginPath();
  ctx.moveTo(x(i0), y(i0));
  for (let i = i0 + 1; i < i1; i++) ctx.lineTo(x(i), y(i));
  ctx.lineWidth = lw; ctx.strokeStyle = stroke; ctx.stroke();
}

// diamonds draws squares on their corners (centre to corner r) at the
// points pts ([x₀, y₀, x₁, y₁, …]), each filled and outlined lw wide in
// turn (so that where they overlap, the later covers the earlier's
// outline): inducing inputs one can drag.
export function diamonds(ctx, pts, r, fill, lw, edge) {
  ctx.fillStyle = fill; ctx.lineWidth = lw; ctx.strokeStyle = edge;
  for (let k = 0; k + 1 < pts.length; k += 2) {
    const px = pts[k], py = pts[k + 1];
    ctx.beginPath();
    ctx.moveTo(px, py - r); ctx.lineTo(px + r, py); ctx.lineTo(px, py + r); ctx.lineTo(px - r, py); ctx.closePath();
    ctx.fill(); ctx.stroke();
  }
}

// clipTo runs draw with the canvas clipped to the box {l, r, t, b}.
export function clipTo(ctx, box, draw) {
  ctx.save();
  ctx.beginPath(); ctx.rect(box.l, box.t, box.r - box.l, box.b - box.t); ctx.clip();
  try { draw(); } finally { ctx.restore(); }
}
