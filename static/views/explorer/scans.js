// The scans (rows) as marks, as the latent views and the ground truth draw
// them: dots in their colours, held-out scans hollow, a highlight that
// greys what is not lit, the path through time, the revisit links and the
// inducing inputs' diamonds. Canvas 2D paths batched by colour (marks.js).
import { byColour, discs, rings, rows, links, polyline, diamonds } from "../marks.js";

const GREY = "rgba(160,170,180,0.35)", RING = "rgba(17,17,17,0.6)", TRAIL = "rgba(60,60,60,0.18)";
const HANDLE = "rgba(234,88,12,0.85)", HANDLE_HOT = "#c2410c"; // an inducing input (dragged: hot)

// training draws scans 0 … n − 1 at (x(i), y(i)): with nothing lit, dots of
// radius rad in their colours; else (highlight) the unlit grey and a little
// smaller, the lit larger in their colours and ringed. size(i) scales scan
// i (the 3-D view's depth cue). It returns how many scans are lit.
export function training(ctx, colour, sel, x, y, n, rad, size = null) {
  const r = (k) => (size ? (i) => k * size(i) : k);
  if (!sel.any) { byColour(ctx, colour, x, y, r(rad), (i) => i < n); return 0; }
  const all = rows(0, n);
  discs(ctx, all, x, y, r(rad - 0.3), GREY, (i) => !sel.lit(i));
  byColour(ctx, colour, x, y, r(rad + 0.5), (i) => i < n && sel.lit(i));
  let count = 0;
  for (let i = 0; i < n; i++) if (sel.lit(i)) count++;
  rings(ctx, all, x, y, size ? (i) => (rad + 0.5) * size(i) + 0.8 : rad + 1.3, 0.8, RING, sel.lit);
  return count;
}

// heldOut draws scans n … nn − 1 hollow in their colours (with anything
// lit, only the lit ones).
export function heldOut(ctx, colour, sel, x, y, n, nn, rad, size = null) {
  if (nn <= n) return;
  byColour(ctx, colour, x, y, size ? (i) => rad * size(i) : rad, (i) => i >= n && i < nn && (!sel.any || sel.lit(i)), { hollow: true });
}

// trail draws the path through time, scan to scan (i < n).
export function trail(ctx, x, y, n) {
  polyline(ctx, 0, n, x, y, TRAIL, 1);
}

// revisitLinks draws the revisits (truth.pairs) as faint links, and the
// hovered scan's links strong (hover: a training scan lit with its
// partners); truth null: the data carry none. With each, every faint link
// is stroked on its own, so that where many meet (a fan of revisits in a
// latent view) they add up and show.
export function revisitLinks(ctx, truth, sel, x, y, n, { faint = true, hover = true, each = false } = {}) {
  if (!truth) return;
  const p = truth.pairs, FAINT = "rgba(220,38,38,0.1)";
  if (faint && each) for (let k = 0; k + 1 < p.length; k += 2) links(ctx, [p[k], p[k + 1]], x, y, FAINT, 1);
  else if (faint) links(ctx, p, x, y, FAINT, 1);
  if (hover && sel.hover >= 0 && sel.hover < n) links(ctx, truth.partners(sel.hover).flatMap((j) => [sel.hover, j]), x, y, "rgba(220,38,38,0.85)", 1.5);
}

// handles draws inducing inputs' diamonds at pts ([x₀, y₀, …]); hot: the
// one being dragged.
export function handles(ctx, pts, hot = false) {
  diamonds(ctx, pts, 4.5, hot ? HANDLE_HOT : HANDLE, 1, "#fff");
}
