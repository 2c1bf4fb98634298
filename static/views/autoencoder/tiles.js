// The tiles: the decoder's predictive mean on a grid × grid of latent
// positions over the map (the centres of equal cells, as faces.Grid and
// the paper's figure), decoded on request, asked again when the grid moves
// noticeably and every TILE_EVERY ms while the model changes, and drawn
// under the map's points.
import { paintOutput, aspect } from "./picture.js";

const TILE_EVERY = 600; // ms between tile refreshes while the model changes

// createTiles keeps the tiles for data (data.js).
export function createTiles(data) {
  let shown = null; // {pts, grid, x0, x1, y0, y1, key, count, iter}: the tiles drawn
  let wanted = null, askedAt = 0, imgs = [];
  const t = {
    on: true, grid: 7,
    // want returns the points to decode when the tiles drawn are stale
    // for the map's range {lo, hi} per axis (xr, yr) at iteration iter,
    // or null.
    want(xr, yr, iter) {
      if (!t.on) return null;
      const g = t.grid, pts = [];
      for (let r = 0; r < g; r++) for (let c = 0; c < g; c++) pts.push(xr.lo + ((c + 0.5) * (xr.hi - xr.lo)) / g, yr.lo + ((r + 0.5) * (yr.hi - yr.lo)) / g);
      const round = (v) => v.toPrecision(2);
      const key = `${g}|${round(xr.lo)}|${round(xr.hi)}|${round(yr.lo)}|${round(yr.hi)}`, now = performance.now();
      if (shown && shown.key === key && (shown.iter === iter || now - askedAt <= TILE_EVERY)) return null;
      askedAt = now;
      wanted = { pts, grid: g, x0: xr.lo, x1: xr.hi, y0: yr.lo, y1: yr.hi, key };
      return pts;
    },
    // answer takes a decoded answer for the tiles last wanted.
    answer(m) {
      shown = { ...wanted, count: m.g, iter: m.iter };
      imgs = Array.from({ length: m.g }, (_, k) => {
        const cv = document.createElement("canvas");
        paintOutput(cv, m.mean, k * m.d, m.d, data.image, data.outputRange);
        return cv;
      });
    },
    forget() { shown = null; imgs = []; },
    // missing says the tiles are on and none are drawn yet.
    missing: () => t.on && !shown,
    // draw draws the tiles on the map's scale s (faint under a lit
    // stretch) and returns how many it drew.
    draw(ctx, s, faint) {
      if (!t.on || !shown || imgs.length !== shown.count) return 0;
      const g = shown.grid, k = aspect(data.image);
      const cw = Math.abs(s.sx(shown.x1) - s.sx(shown.x0)) / g, ch = Math.abs(s.sy(shown.y1) - s.sy(shown.y0)) / g;
      const th = Math.min(ch * 0.94, cw * 0.94 * k), tw = th / k;
      ctx.globalAlpha = faint ? 0.45 : 0.88;
      ctx.imageSmoothingEnabled = tw > 40;
      for (let i = 0; i < shown.count; i++) ctx.drawImage(imgs[i], s.sx(shown.pts[2 * i]) - tw / 2, s.sy(shown.pts[2 * i + 1]) - th / 2, tw, th);
      ctx.globalAlpha = 1;
      return shown.count;
    },
  };
  return t;
}
