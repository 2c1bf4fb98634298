// A hidden layer's first three dimensions as one orthographic view one can
// turn (yaw about h[2], then pitch) and zoom, inside the box of the data:
// its edges, a turning triad of the axes with their names, the path
// through time, the revisit links, the scans (nearer ones larger) and the
// next layer's inducing inputs. The colour bar is the static layer.
import { nearestPoint } from "./link.js";
import { training, heldOut, trail, revisitLinks, handles } from "./scans.js";
import { clipTo } from "../marks.js";
import { CB } from "./latent2d.js";

export const VIEW3D = { yaw: -0.65, pitch: 0.5, zoom: 1 }; // the starting view
const BOX = "rgb(203,210,217)", AXES = ["rgb(185,28,28)", "rgb(4,120,87)", "rgb(29,78,216)"]; // the triad: dimensions 1, 2, 3

// draw3d draws the layer as latent2d's drawPairs does, turned as o says
// ({yaw, pitch, zoom}), and returns the same {count, hit, screen}.
export function draw3d(v, a, o) {
  const { li, L, next, n, nT, M, rng, colour, sel, truth } = a;
  const D = L.d, plot = v.plot, w = plot.w, h = plot.h, nn = n + nT;
  const box = { l: 8, r: w - 8, t: plot.m.t, b: h - plot.m.b - CB + 16 };
  const lo = [0, 1, 2].map((k) => rng[k].lo), hi = [0, 1, 2].map((k) => rng[k].hi);
  const c = lo.map((l, k) => (l + hi[k]) / 2);
  // the data box's half-diagonal: the view fits at every angle
  const R = Math.max(1e-9, Math.hypot(...lo.map((l, k) => (hi[k] - l) / 2)));
  const cy = Math.cos(o.yaw), sy = Math.sin(o.yaw), cp = Math.cos(o.pitch), sp = Math.sin(o.pitch);
  const k = (o.zoom * 0.96 * Math.min(box.r - box.l, box.b - box.t)) / (2 * R);
  const mx = (box.l + box.r) / 2, my = (box.t + box.b) / 2;
  // world (data units) → screen
  const P = (x0, x1, x2) => {
    const u0 = x0 - c[0], u1 = x1 - c[1], u2 = x2 - c[2];
    const X = cy * u0 - sy * u1, Dp = sy * u0 + cy * u1;
    return [mx + k * X, my - k * (cp * u2 + sp * Dp)];
  };
  // every scan projected once; nearer scans larger (the depth cue)
  const b = (v.bufs3 ??= { x: new Float32Array(0), y: new Float32Array(0), z: new Float32Array(0) });
  if (b.x.length < nn) { b.x = new Float32Array(nn); b.y = new Float32Array(nn); b.z = new Float32Array(nn); }
  const pxs = b.x, pys = b.y, size = b.z;
  for (let i = 0; i < nn; i++) { // P() inlined: no array per scan
    const u0 = M(i, 0) - c[0], u1 = M(i, 1) - c[1], u2 = M(i, 2) - c[2];
    const Dp = sy * u0 + cy * u1;
    pxs[i] = mx + k * (cy * u0 - sy * u1); pys[i] = my - k * (cp * u2 + sp * Dp);
    const toward = sp * u2 - cp * Dp; // along the direction to the viewer
    size[i] = Math.max(0.6, Math.min(1.45, 1 + (0.4 * toward) / R));
  }
  const X = (i) => pxs[i], Y = (i) => pys[i], S = (i) => size[i];
  v.layer.draw(plot, `3d|${colour.key}`, (ctx) => colour.bar(ctx, plot.m.l, h - CB + 4, w - plot.m.l - plot.m.r, 8));
  const ctx = plot.ctx, any = sel.any;
  // every row of large data, when fetched (points.js): P as an affine map
  const k0 = [cy * c[0] - sy * c[1], sy * c[0] + cy * c[1]];
  const view = { dims: [0, 1, 2], box, px: [k * cy, -k * sy, 0, mx - k * k0[0]], py: [-k * sp * sy, -k * sp * cy, -k * cp, my + k * (cp * c[2] + sp * k0[1])] };
  const every = !!a.all?.mean && a.all.d === D && v.points.draw(w, h, a.all, [view], colour, any);
  if (!every) v.points.clear();
  let count = 0;
  clipTo(ctx, box, () => {
    // the data's box, its edges along each axis
    const corner = (m) => P(m & 1 ? hi[0] : lo[0], m & 2 ? hi[1] : lo[1], m & 4 ? hi[2] : lo[2]);
    ctx.beginPath();
    for (let m = 0; m < 8; m++) for (const bit of [1, 2, 4]) if (!(m & bit)) { ctx.moveTo(...corner(m)); ctx.lineTo(...corner(m | bit)); }
    ctx.lineWidth = 1; ctx.strokeStyle = BOX; ctx.stroke();
    // the axes: a turning triad in the corner, named at their tips (names
    // of axes seen nearly end-on would overlap: moved apart)
    const gx = box.l + 46, gy = box.b - 40, tips = [];
    for (let ax = 0; ax < 3; ax++) {
      const u = [0, 0, 0]; u[ax] = 30 / k;
      const [ex, ey] = P(c[0] + u[0], c[1] + u[1], c[2] + u[2]);
      const dx = ex - mx, dy = ey - my, len = Math.hypot(dx, dy) || 1;
      ctx.beginPath(); ctx.moveTo(gx, gy); ctx.lineTo(gx + dx, gy + dy);
      ctx.lineWidth = 2; ctx.strokeStyle = AXES[ax]; ctx.stroke();
      let tx = gx + dx + (dx / len) * 14, ty = gy + dy + (dy / len) * 9;
      while (tips.some(([qx, qy]) => Math.abs(qx - tx) < 34 && Math.abs(qy - ty) < 12)) ty += 12;
      tips.push([tx, ty]);
    }
    if (!every) trail(ctx, X, Y, n);
    revisitLinks(ctx, truth, sel, X, Y, n, { each: true });
    const inducing = () => {
      if (next && next.q === D) handles(ctx, Array.from({ length: next.m }, (_, j) => P(next.z[j * D], next.z[j * D + 1], next.z[j * D + 2])).flat());
    };
    if (any) inducing();
    count = every && !any ? 0 : training(ctx, colour, sel, X, Y, n, 3, S);
    if (nT) { // painted again only when the analysis, the view, the colours or the selection change
      v.held.draw(plot, `3d|${a.testKey}|${o.yaw},${o.pitch},${o.zoom}|${lo},${hi}|${colour.key}|${any ? sel.key : ""}`, (hctx) => {
        clipTo(hctx, box, () => heldOut(hctx, colour, sel, X, Y, n, nn, 2.8, S));
      });
    }
    if (!any) inducing();
    ctx.textAlign = "center"; ctx.textBaseline = "middle";
    tips.forEach(([tx, ty], ax) => { ctx.fillStyle = AXES[ax]; ctx.fillText(`h${li + 1}[${ax + 1}]`, tx, ty); });
    ctx.textAlign = "left"; ctx.textBaseline = "top"; ctx.fillStyle = "#475569";
    ctx.fillText([0, 1, 2].map((ax) => `h${li + 1}[${ax + 1}] ${lo[ax].toFixed(1)} … ${hi[ax].toFixed(1)}`).join("   ").replaceAll("-", "−"), box.l + 4, box.t);
  });
  return {
    count,
    hit: { proj: [], handle: () => null, point: (px, py) => nearestPoint(n, X, Y, px, py) },
    screen: (i) => [pxs[i], pys[i]],
  };
}
