// The penalties per training row: each layer's compression and propagation
// terms of the bound (nats), stacked over time, where the bound pays for
// what. Its time axis brushes a time range; the lit rows' totals are ticks.
// Drawn again only when the analysis, the selection or its size changes.
import { Plot } from "../../plot.js";
import { StaticLayer, sizeKey } from "../layer.js";
import { viewBox } from "../dom.js";
import { wireTimeBrush, brushBand, timeBar } from "./link.js";

const LAYER_COL = ["#0284c7", "#7c3aed", "#d97706", "#059669", "#db2777", "#4b5563"];

// createPenalties makes the view for data (data.js); env: {link}.
export function createPenalties(data, { link }) {
  const box = viewBox("penalties", `Penalties per ${data.row.one} (nats): where the compression and propagation terms concentrate`, "penalties");
  const cv = box.cv, plot = new Plot(cv, { l: 56, r: 12, t: 18, b: 30 }), layer = new StaticLayer("explorer-penalties");
  let drawn = "", axis = null;
  wireTimeBrush(cv, link, () => data.input.values, () => axis);
  return {
    root: box.root, cv,
    // draw: m = {frame, colour, byTime, sel, fit: {count}}.
    draw(m) {
      const { colour, sel } = m, L = m.frame.layers, n = data.n, nAll = data.nAll, ts = data.input.values;
      const key = `${sizeKey(cv)}|${m.fit.count}|${!!L[0].comp}|${m.byTime}|${sel.key}`;
      if (drawn === key) return;
      if (!plot.begin(false)) return; // the static layer replaces every pixel
      drawn = key;
      const { w, h } = plot;
      if (!L[0].comp) { cv.dataset.highlighted = "0"; return; }
      let top = 0;
      const tot = new Float64Array(n);
      for (let i = 0; i < n; i++) { for (const l of L) tot[i] += Math.max(0, l.comp?.[i] ?? 0) + Math.max(0, l.prop?.[i] ?? 0); top = Math.max(top, tot[i]); }
      // The keys go in rows above the plot, never over its areas: as many
      // rows as the width needs (presentation mode's larger type wraps).
      const ctx0 = plot.ctx, rowH = Math.ceil(ctx0.measureText("M").width * 1.6), keys = [];
      let lx = plot.m.l + 8, row = 0;
      L.forEach((l, li) => {
        for (const [nm, alpha] of [["compression", 1], ["propagation", 0.45]]) {
          const t = `layer ${li + 1} ${nm}`, kw = ctx0.measureText(t).width + 24;
          if (lx > plot.m.l + 8 && lx + kw - 11 > w - plot.m.r) { lx = plot.m.l + 8; row++; }
          keys.push({ t, li, alpha, x: lx, y: 4 + rowH * (row + 0.5) });
          lx += kw;
        }
      });
      const t0 = ts[0], t1 = ts[nAll - 1], pad = 0.01 * (t1 - t0 || 1);
      const s = plot.area(t0 - pad, t1 + pad, 0, top * 1.05 || 1, { l: plot.m.l, r: w - plot.m.r, t: 8 + rowH * (row + 1), b: h - plot.m.b - 22 });
      const X = (i) => s.sx(ts[i]), any = sel.any;
      // stacked areas, one polygon per layer and term
      layer.draw(plot, `${m.fit.count}|${any}|${m.byTime}`, (ctx) => {
        const font = ctx.font;
        plot.axes({ ylabel: "nats" });
        const base = new Float64Array(n);
        L.forEach((l, li) => {
          for (const [arr, alpha] of [[l.comp, 1], [l.prop, 0.45]]) {
            if (!arr) continue;
            ctx.beginPath();
            for (let i = 0; i < n; i++) ctx.lineTo(X(i), s.sy(base[i] + Math.max(0, arr[i])));
            for (let i = n - 1; i >= 0; i--) ctx.lineTo(X(i), s.sy(base[i]));
            ctx.closePath();
            ctx.globalAlpha = any ? 0.55 * alpha : alpha;
            ctx.fillStyle = LAYER_COL[li % LAYER_COL.length]; ctx.fill();
            for (let i = 0; i < n; i++) base[i] += Math.max(0, arr[i]);
          }
        });
        ctx.globalAlpha = 1;
        timeBar(ctx, colour, m.byTime, s, h, `${data.input.name}, training ${data.row.many}`);
        ctx.textAlign = "left"; ctx.textBaseline = "middle"; ctx.font = font;
        for (const k of keys) {
          ctx.globalAlpha = k.alpha; ctx.fillStyle = LAYER_COL[k.li % LAYER_COL.length]; ctx.fillRect(k.x, k.y - 4, 10, 8); ctx.globalAlpha = 1;
          ctx.fillStyle = "#334155"; plot.text(k.t, k.x + 13, k.y);
        }
        plot.mark(s.box.l, s.box.t, s.box.r, s.box.b); // the areas' room: no label over it
      });
      let count = 0;
      if (any) { // the brush, the lit rows' totals as ticks
        const ctx = plot.ctx;
        brushBand(ctx, sel, s, X, nAll);
        ctx.beginPath();
        for (let i = 0; i < n; i++) if (sel.lit(i)) { count++; ctx.moveTo(X(i), s.sy(tot[i])); ctx.lineTo(X(i), s.sy(0)); }
        ctx.lineWidth = 1; ctx.strokeStyle = "rgba(17,24,39,0.55)"; ctx.stroke();
      }
      axis = { scale: s, bottom: h };
      cv.dataset.highlighted = String(count);
    },
  };
}
