// Layer panel for a layer that is not 1-D → 1-D ("layernd"; "latent" names only
// the robot latent-space analysis): the outgoing message
// means as a scatter coloured by datum order (time), ±2 sd as ellipses,
// with the inducing outputs as diamonds; choose the dimensions shown.
import { register, dimSelect, layerUnits } from "./registry.js";
import { Plot, C, StickyRange, colormap, legend, fmt } from "../plot.js";
import { layerTitle } from "./layer.js";

register("layernd", (el, app) => {
  const li = Number(el.dataset.layer);
  const plot = new Plot(el.querySelector("canvas"));
  const tools = el.querySelector(".panel-tools");
  const xr = new StickyRange(), yr = new StickyRange();
  let a = 0, b = 1;
  return {
    draw(s) {
      const { setup, frame } = s;
      const L = frame?.layers?.[li];
      if (!L || !plot.begin()) return;
      const nL = frame.layers.length, N = frame.n, D = L.d;
      const last = li === nL - 1;
      if (D >= 2) {
        dimSelect(tools, "x dim", D, a, (v) => { a = v; xr.reset(); yr.reset(); app.redraw(); }, `layer-${li}-dim-a`);
        dimSelect(tools, "y dim", D, b, (v) => { b = v; xr.reset(); yr.reset(); app.redraw(); }, `layer-${li}-dim-b`);
      }
      const bb = Math.min(b, D - 1), aa = Math.min(a, D - 1);
      const ctx = plot.ctx;
      if (!L.mean) { el.querySelector(".overlay").textContent = frame.eval_error || ""; return; }
      const X = (n) => (D >= 2 ? L.mean[n * D + aa] : n);
      const Y = (n) => L.mean[n * D + (D >= 2 ? bb : 0)];
      const SX = (n) => (D >= 2 ? 2 * Math.sqrt(Math.max(0, L.var[n * D + aa])) : 0);
      const SY = (n) => 2 * Math.sqrt(Math.max(0, L.var[n * D + (D >= 2 ? bb : 0)]));
      let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
      for (let n = 0; n < N; n++) {
        x0 = Math.min(x0, X(n) - SX(n)); x1 = Math.max(x1, X(n) + SX(n));
        y0 = Math.min(y0, Y(n) - SY(n)); y1 = Math.max(y1, Y(n) + SY(n));
      }
      const px = 0.05 * (x1 - x0 || 1), py = 0.05 * (y1 - y0 || 1);
      xr.update(x0 - px, x1 + px); yr.update(y0 - py, y1 + py);
      plot.area(xr.lo, xr.hi, yr.lo, yr.hi);
      const ua = layerUnits(setup, li, nL, aa), ub = layerUnits(setup, li, nL, bb);
      plot.axes({
        xlabel: D >= 2 ? ua.ylabel : "datum (time order)",
        ylabel: ub.ylabel,
        ux: D >= 2 ? ua.uy : undefined, uy: ub.uy,
      });
      plot.clip(() => {
        for (let n = 0; n < N; n++) {
          const t = N > 1 ? n / (N - 1) : 0.5;
          const rx = Math.abs(plot.sx(X(n) + SX(n)) - plot.sx(X(n))), ry = Math.abs(plot.sy(Y(n) + SY(n)) - plot.sy(Y(n)));
          ctx.fillStyle = colormap(t, 0.08);
          ctx.beginPath();
          if (D >= 2) ctx.ellipse(plot.sx(X(n)), plot.sy(Y(n)), Math.max(rx, 0.5), Math.max(ry, 0.5), 0, 0, 2 * Math.PI);
          else ctx.rect(plot.sx(X(n)) - 1, plot.sy(Y(n)) - ry, 2, 2 * ry);
          ctx.fill();
        }
        ctx.lineWidth = 1; ctx.strokeStyle = "rgba(60,60,60,0.25)";
        ctx.beginPath();
        for (let n = 0; n < N; n++) ctx.lineTo(plot.sx(X(n)), plot.sy(Y(n)));
        ctx.stroke();
        for (let n = 0; n < N; n++) {
          ctx.fillStyle = colormap(N > 1 ? n / (N - 1) : 0.5, 0.95);
          ctx.beginPath(); ctx.arc(plot.sx(X(n)), plot.sy(Y(n)), 2.6, 0, 2 * Math.PI); ctx.fill();
        }
        if (D >= 2) {
          for (let k = 0; k < L.m; k++) {
            const hx = plot.sx(L.u_mean[k * D + aa]), hy = plot.sy(L.u_mean[k * D + bb]), r = 5;
            ctx.beginPath(); ctx.moveTo(hx, hy - r); ctx.lineTo(hx + r, hy); ctx.lineTo(hx, hy + r); ctx.lineTo(hx - r, hy); ctx.closePath();
            ctx.fillStyle = C.handle; ctx.fill(); ctx.strokeStyle = "#fff"; ctx.stroke();
          }
        }
      });
      let comp = 0, prop = 0;
      if (L.comp) for (let n = 0; n < N; n++) { comp += L.comp[n]; prop += L.prop[n]; }
      layerTitle(el.querySelector(".layer-title"), `Layer ${li + 1}: ${L.q}-D ${li === 0 ? "input" : `h${li}`} → ${D}-D ${last ? "output" : `h${li + 1}`}`,
        `of ${nL} · ${L.m} inducing · compression ${fmt(comp)}, propagation ${fmt(prop)} nats`);
      legend(el.querySelector(".legend"), [
        { label: "message means, coloured by datum order (early → late)", short: "means (early → late)", color: colormap(0.5), kind: "dot" },
        { label: "± 2 sd", color: colormap(0.5, 0.3), kind: "band" },
        ...(D >= 2 ? [{ label: "inducing output means u", short: "u", color: C.handle, kind: "diamond" }] : []),
      ]);
      el.querySelector(".overlay").textContent = frame.eval_error ? `⚠ ${frame.eval_error}` : "";
    },
  };
});
