// A hidden layer's message means in pairwise projections side by side
// (dimensions 1–2, 1–3, 2–3 for a 3-D layer; one for 2-D; dimension 1
// against itself for 1-D), each with halos of ±2 sd, the path through
// time, the revisit links, the scans (held-out ones hollow) and the next
// layer's inducing inputs, which live in this space, as diamonds one can
// drag. The axes and the colour bar are the static layer.
import { nearestPoint } from "./link.js";
import { training, heldOut, trail, revisitLinks, handles } from "./scans.js";
import { ellipses, clipTo } from "../marks.js";
import { drawDensity, densityPair } from "./density.js";

export const CB = 30; // px under the plots for the colour bar

// drawPairs draws the layer (v: {plot, layer, bufs, points}; a: what to draw, see
// latent.js) and returns what the pointer needs: {count (scans lit),
// hit: {proj, handle(px, py), point(px, py)}, screen(i)}.
export function drawPairs(v, a) {
  const { li, L, next, n, nT, M, rng, colour, sel, truth, drag, collapsed } = a;
  const label = (k) => `h${li + 1} dimension ${k + 1}${collapsed?.[k] ? " (collapsed)" : ""}`;
  const D = L.d, plot = v.plot, w = plot.w, h = plot.h, nn = n + nT;
  const pairs = D >= 3 ? [[0, 1], [0, 2], [1, 2]] : D === 2 ? [[0, 1]] : [[0, 0]];
  const gap = 14, pw = (w - gap * (pairs.length - 1)) / pairs.length;
  const P = pairs.map(([ia, ib], pi) => {
    const x0p = pi * (pw + gap);
    const box = { l: x0p + plot.m.l, r: x0p + pw - 4, t: plot.m.t, b: h - plot.m.b - CB };
    const xa = rng[ia].lo, xb = rng[ia].hi, ya = rng[ib].lo, yb = rng[ib].hi;
    const px = 0.08 * (xb - xa || 1), py = 0.08 * (yb - ya || 1);
    const s = plot.area(xa - px, xb + px, ya - py, yb + py, box, { equal: true });
    // every scan's place in this projection, once a draw
    const buf = (v.bufs[pi] ??= { x: new Float32Array(0), y: new Float32Array(0) });
    if (buf.x.length < nn) { buf.x = new Float32Array(nn); buf.y = new Float32Array(nn); }
    const bx = buf.x, by = buf.y;
    for (let i = 0; i < nn; i++) { bx[i] = s.sx(M(i, ia)); by[i] = s.sy(M(i, ib)); }
    return { a: ia, b: ib, box, s, bx, by, X: (i) => bx[i], Y: (i) => by[i] };
  });
  v.layer.draw(plot, `${li}|${P.map(({ s }) => [s.x0, s.x1, s.y0, s.y1]).join()}|${colour.key}|${collapsed ?? ""}`, (ctx) => {
    P.forEach((p, pi) => {
      Object.assign(plot, p.s);
      plot.axes({ xlabel: label(p.a), ylabel: label(p.b), xlabelAt: p.box.b + 30, ylabelAt: pi * (pw + gap) + 13 });
    });
    colour.bar(ctx, plot.m.l, h - CB + 4, w - plot.m.l - plot.m.r, 8);
  });
  const ctx = plot.ctx, any = sel.any;
  // large data: the density of every row under the sample, and every row
  // itself once fetched (scale.js, points.js)
  for (const p of P) {
    const dp = densityPair(a.dens, p.a, p.b);
    if (dp) clipTo(ctx, p.box, () => drawDensity(ctx, p.s, dp));
  }
  const pairView = ({ a: pa, b, s, box }) => ({ dims: [pa, b, b], px: [s.sx(1) - s.sx(0), 0, 0, s.sx(0)], py: [0, s.sy(1) - s.sy(0), 0, s.sy(0)], box });
  const every = !!a.all?.mean && a.all.d === D && v.points.draw(w, h, a.all, P.map(pairView), colour, any);
  if (!every) v.points.clear();
  // the next layer's inducing inputs (the dragged one where it is dragged)
  const inducing = (p) => {
    if (!next || next.q !== D) return;
    const pts = [];
    for (let k = 0; k < next.m; k++) if (!drag || drag.handle !== k) pts.push(p.s.sx(next.z[k * D + p.a]), p.s.sy(next.z[k * D + p.b]));
    handles(ctx, pts);
    if (drag) handles(ctx, [p.s.sx(drag.z[p.a]), p.s.sy(drag.z[p.b])], true);
  };
  // halos: ±2 sd in each projected dimension, one path per colour (a halo
  // inside its scan's dot would not show: left out)
  const faint = colour.translucent(0.1), hidden = (any ? 3.2 : 2.7) - 0.5;
  let count = 0;
  P.forEach((p, pi) => clipTo(ctx, p.box, () => {
    const k = p.s.sx(1) - p.s.sx(0); // px per unit, both axes
    const rx = (i) => Math.max(0.5, k * 2 * Math.sqrt(Math.max(0, L.var[i * D + p.a])));
    const ry = (i) => Math.max(0.5, k * 2 * Math.sqrt(Math.max(0, L.var[i * D + p.b])));
    const halo = (i) => { const x = rx(i); return x > hidden || ry(i) > hidden ? x : null; };
    const keep = (i) => i < n && (!any || sel.lit(i));
    if (!every) for (let b = 0; b < colour.bins; b++) ellipses(ctx, colour.members[b], p.X, p.Y, halo, ry, faint[b], keep);
    if (!every) trail(ctx, p.X, p.Y, n);
    revisitLinks(ctx, truth, sel, p.X, p.Y, n, { each: true });
    if (any) inducing(p); // under the lit scans
    const c = every && !any ? 0 : training(ctx, colour, sel, p.X, p.Y, n, 2.7);
    if (pi === 0) count = c;
    if (a.rect && p.a === a.rect.p.a && p.b === a.rect.p.b) { // a brush being drawn
      ctx.strokeStyle = "rgba(202,138,4,0.9)"; ctx.lineWidth = 1.5;
      ctx.strokeRect(a.rect.x0, a.rect.y0, a.rect.x1 - a.rect.x0, a.rect.y1 - a.rect.y0);
    }
  }));
  // the held-out scans, placed by the analysis: painted again only when it,
  // the axes, the colours or the selection change
  if (nT) {
    v.held.draw(plot, `${a.testKey}|${P.map(({ s }) => [s.x0, s.x1, s.y0, s.y1]).join()}|${colour.key}|${any ? sel.key : ""}`, (hctx) => {
      for (const p of P) clipTo(hctx, p.box, () => heldOut(hctx, colour, sel, p.X, p.Y, n, nn, 2.6));
    });
  }
  if (!any) for (const p of P) clipTo(ctx, p.box, () => inducing(p));
  const proj = P.map(({ s, a, b }) => ({ s, a, b }));
  return {
    count,
    hit: {
      proj,
      handle(px, py) {
        if (!next || next.q !== D) return null;
        for (let p = 0; p < proj.length; p++) {
          const { s, a, b } = proj[p];
          for (let k = 0; k < next.m; k++) {
            if (Math.abs(s.sx(next.z[k * D + a]) - px) < 7 && Math.abs(s.sy(next.z[k * D + b]) - py) < 7) {
              return { layer: li + 1, handle: k, proj: p, z: Array.from(next.z.slice(k * D, k * D + D)) };
            }
          }
        }
        return null;
      },
      point(px, py) {
        const p = P.find((q) => q.box.l <= px && px <= q.box.r);
        return p ? nearestPoint(n, p.X, p.Y, px, py) : -1;
      },
    },
    screen: (i) => [P[0].bx[i], P[0].by[i]],
  };
}
