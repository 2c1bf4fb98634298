// The ground truth: where each row really was (the robot's path, x and y
// in metres), never used for fitting, in the colours of every view, with
// the revisits linked. Shown only for data that carry ground truth
// (data.js). Its colour bar brushes a time range while the colours show
// time.
import { Plot } from "../../plot.js";
import { StaticLayer, sizeKey } from "../layer.js";
import { viewBox } from "../dom.js";
import { byColour, discs, rings, rows, polyline } from "../marks.js";
import { revisitLinks } from "./scans.js";
import { wireTimeBrush, nearestPoint } from "./link.js";

const GREY = "rgba(160,170,180,0.35)";

// createTruth makes the view; env: {link}.
export function createTruth(T, { link }) {
  const u = T.unit ? ` in ${T.unit}` : "", names = T.names.slice(0, 2).join(", ");
  const box = viewBox("path", `Ground truth (${names}${u}; never used for fitting)`, "path");
  const cv = box.cv, plot = new Plot(cv, { l: 56, r: 12, t: 18, b: 30 }), layer = new StaticLayer("explorer-path");
  let drawn = "", axis = null, last = null; // last: {nAll, X, Y, times}
  wireTimeBrush(cv, link, () => last.times, () => axis, (px, py) => (last ? nearestPoint(last.nAll, last.X, last.Y, px, py) : -1));
  return {
    root: box.root, cv,
    screen: (i) => (last ? [last.X(i), last.Y(i)] : null),
    // draw: m = {data, colour, byTime (the colours show time), sel, revisits}.
    draw(m) {
      const { data, colour, sel } = m, T = data.truth, n = data.n, nAll = data.nAll;
      const key = `${sizeKey(cv)}|${colour.key}|${sel.key}|${m.revisits}`;
      if (drawn === key) return;
      if (!plot.begin(false)) return; // the static layer replaces every pixel
      drawn = key;
      const { w, h } = plot;
      let xa = Infinity, xb = -Infinity, ya = Infinity, yb = -Infinity;
      for (let i = 0; i < nAll; i++) { xa = Math.min(xa, T.x[i]); xb = Math.max(xb, T.x[i]); ya = Math.min(ya, T.y[i]); yb = Math.max(yb, T.y[i]); }
      const s = plot.area(xa - 1, xb + 1, ya - 1, yb + 1, { l: plot.m.l, r: w - plot.m.r, t: plot.m.t, b: h - 80 }, { equal: true });
      const X = (i) => s.sx(T.x[i]), Y = (i) => s.sy(T.y[i]);
      const truth = m.revisits ? T : null, any = sel.any, all = rows(0, nAll);
      const cbY = h - 44; // the colour bar, its labels and (when narrow) its title's own line
      // The static layer: axes, the path, the revisit links, every scan in
      // its colour (or grey under a highlight), the colour bar.
      layer.draw(plot, `${colour.key}|${any}|${m.revisits}`, (ctx) => {
        const unit = T.unit ? ` (${T.unit})` : "";
        plot.axes({ xlabel: `${T.names[0] ?? "truth 1"}${unit}`, ylabel: `${T.names[1] ?? "truth 2"}${unit}`, xlabelAt: s.box.b + 30 });
        polyline(ctx, 0, nAll, X, Y, "rgba(60,60,60,0.2)", 1);
        revisitLinks(ctx, truth, sel, X, Y, n, { hover: false });
        if (any) discs(ctx, all, X, Y, 2.5, GREY);
        else {
          byColour(ctx, colour, X, Y, 3, (i) => i < n);
          byColour(ctx, colour, X, Y, 3, (i) => i >= n, { hollow: true });
        }
        ctx.fillStyle = "#1f2933"; ctx.textAlign = "left"; ctx.textBaseline = "bottom";
        ctx.fillText("start", X(0) + 6, Y(0) - 4);
        colour.bar(ctx, plot.m.l, cbY, w - plot.m.l - plot.m.r, 9);
      });
      let count = 0;
      if (any) { // the lit scans
        const ctx = plot.ctx;
        revisitLinks(ctx, truth, sel, X, Y, n, { faint: false });
        byColour(ctx, colour, X, Y, 3.2, (i) => i < n && sel.lit(i));
        byColour(ctx, colour, X, Y, 3.2, (i) => i >= n && sel.lit(i), { hollow: true });
        rings(ctx, all, X, Y, 4.5, 1, "#111111", sel.lit);
        for (let i = 0; i < nAll; i++) if (sel.lit(i)) count++;
      }
      last = { nAll, X, Y, times: data.input.values };
      // the colour bar brushes a time range when it shows time
      const cb = { l: plot.m.l, r: w - plot.m.r, t: cbY, b: cbY + 9 };
      axis = m.byTime ? { scale: plot.area(colour.lo, colour.hi, 0, 1, cb) } : null;
      cv.dataset.highlighted = String(count);
      cv.dataset.colourbar = colour.title;
    },
  };
}
