// Bound panel: the bound over iterations; between the likelihood (top
// line) and the bound (thick line) the penalties are stacked per layer:
// KL, compression, propagation.
import { register } from "./registry.js";
import { Plot, C, StickyRange, legend, fmt, columnDecimals, fixed } from "../plot.js";

const SHADES = [1, 0.72, 0.5, 0.36, 0.26, 0.2];
function shade(hex, a) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${a})`;
}

register("bound", (el, app) => {
  const plot = new Plot(el.querySelector("canvas"), { l: 64, r: 14, t: 10, b: 40 });
  const tools = el.querySelector(".panel-tools");
  const yr = new StickyRange();
  let recent = true;
  const btn = document.createElement("button");
  btn.type = "button";
  btn.dataset.testid = "bound-zoom";
  btn.title = "Zoom the vertical axis to the recent half of the run, or show the whole run";
  const label = () => { btn.textContent = recent ? "showing: recent" : "showing: all"; btn.setAttribute("aria-pressed", String(recent)); };
  label();
  btn.addEventListener("click", () => { recent = !recent; label(); yr.reset(); app.redraw(); });
  // Clear: the chart starts again from the current iteration (the
  // optimizer and the model are untouched).
  let since = -1;
  const clear = document.createElement("button");
  clear.type = "button";
  clear.dataset.testid = "bound-clear";
  clear.textContent = "clear history";
  clear.title = "Start the chart again from the current iteration";
  clear.addEventListener("click", () => {
    const h = app.state.history;
    since = h.length ? h[h.length - 1].iter : -1;
    yr.reset();
    app.redraw();
  });
  tools.append(btn, clear);

  return {
    draw(s) {
      let h = s.history;
      if (!plot.begin()) return;
      const legendEl = el.querySelector(".legend");
      if (h.length && h[h.length - 1].iter < since) since = -1; // a reset started a new run
      if (since >= 0) h = h.filter((p) => p.iter >= since);
      if (h.length === 0) return;
      const nL = h[h.length - 1].terms.length;
      // One point (a lesson's step arrives fitted): it stands in the middle.
      const i0 = h.length === 1 ? h[0].iter - 5 : h[0].iter, i1 = Math.max(h[h.length - 1].iter, i0 + 10);
      // "recent": the last 40 % of the run (at least the last 20 points),
      // with a robust bottom: one disastrous moment (an edit that cost
      // 10⁵ nats) does not squash the rest flat; points below it are
      // clipped and marked.
      const from = recent ? Math.max(0, Math.min(Math.floor(h.length * 0.6), h.length - 20)) : 0;
      const win = [];
      let hi = -Infinity;
      for (let k = from; k < h.length; k++) { win.push(h[k].bound); hi = Math.max(hi, h[k].lik, h[k].bound); }
      win.sort((a, b) => a - b);
      let lo = win[0];
      if (recent && win.length >= 10) {
        const q = (f) => win[Math.min(win.length - 1, Math.floor(f * (win.length - 1)))];
        const med = q(0.5), spread = Math.max(hi - med, q(0.9) - q(0.1), 1e-6);
        // The latest quarter (at least 10 points) stays readable: after a
        // large edit the dip can fill a tenth of the window, and the
        // quantiles alone would then keep the spike and flatten the
        // recovered bound into a line (slides.BoundAxis, the download's
        // rule).
        let tLo = Infinity, tHi = -Infinity;
        for (let k = Math.max(from, h.length - Math.max(10, Math.ceil(0.25 * (h.length - from)))); k < h.length; k++) {
          if (!Number.isFinite(h[k].bound)) continue;
          tLo = Math.min(tLo, h[k].bound);
          tHi = Math.max(tHi, h[k].bound, Number.isFinite(h[k].lik) ? h[k].lik : -Infinity);
        }
        lo = Math.max(lo, Math.min(q(0.1), med - 3 * spread));
        if (tLo < Infinity) lo = Math.max(lo, tLo - Math.max(tHi - tLo, 1e-6));
      }
      const clipped = win[0] < lo;
      const pad = 0.06 * (hi - lo || 1);
      yr.update(lo - pad, hi + pad);
      if (clipped) { yr.lo = lo - pad; yr.hi = hi + pad; } // follow at once after a bad moment
      plot.area(i0, i1, yr.lo, yr.hi);
      plot.axes({ xlabel: "iteration", ylabel: "nats" });
      const n = h.length, x = (k) => h[k].iter;
      plot.clip(() => {
        // stacked penalties from the likelihood down to the bound
        let top = h.map((p) => p.lik);
        const kinds = [["kl", C.kl], ["comp", C.comp], ["prop", C.prop]];
        for (let l = 0; l < nL; l++) {
          for (let t = 0; t < 3; t++) {
            const bot = h.map((p, k) => top[k] - (p.terms[l]?.[t] ?? 0));
            const tt = top;
            plot.band(n, x, (k) => bot[k], (k) => tt[k], shade(kinds[t][1], 0.75 * SHADES[Math.min(l, SHADES.length - 1)]));
            top = bot;
          }
        }
        plot.line(n, x, (k) => h[k].lik, C.lik, 1.5, [5, 3]);
        plot.line(n, x, (k) => h[k].bound, C.bound, 2.4);
        // A single point draws no line or band: a bar of its penalties
        // and dots for the likelihood and the bound, so that the chart
        // agrees with the bound the page shows.
        if (n === 1) {
          const ctx = plot.ctx, px = plot.sx(x(0)), p = h[0];
          let top = p.lik;
          for (let l = 0; l < nL; l++) {
            for (let t = 0; t < 3; t++) {
              const bot = top - (p.terms[l]?.[t] ?? 0);
              ctx.fillStyle = shade(kinds[t][1], 0.75 * SHADES[Math.min(l, SHADES.length - 1)]);
              ctx.fillRect(px - 6, plot.sy(top), 12, plot.sy(bot) - plot.sy(top));
              top = bot;
            }
          }
          for (const [v, c] of [[p.lik, C.lik], [p.bound, C.bound]]) {
            ctx.beginPath(); ctx.arc(px, plot.sy(v), 4, 0, 2 * Math.PI); ctx.fillStyle = c; ctx.fill();
          }
        }
      });
      if (clipped) { // where the bound fell below the chart, say how far
        const ctx = plot.ctx, b = plot.box;
        ctx.fillStyle = C.muted; ctx.textAlign = "left"; ctx.textBaseline = "bottom";
        plot.text(`▼ lowest ${fmt(win[0])} nats (off the chart)`, b.l + 6, b.b - 4);
      }
      const p = h[h.length - 1];
      legend(legendEl, [
        { label: "bound", color: C.bound, kind: "line" },
        { label: "likelihood", short: "likelihood", color: C.lik, kind: "dash" },
        { label: "KL", color: C.kl, kind: "band" },
        { label: "compression", short: "compr.", color: C.comp, kind: "band" },
        { label: "propagation", short: "propag.", color: C.prop, kind: "band" },
        { label: "between the likelihood and the bound: what each layer pays, paler = deeper layer", short: "paler = deeper", color: "rgba(120,120,120,0.35)", kind: "band" },
      ]);
      // a small table of the current terms
      let tbl = el.querySelector("table.terms");
      if (!tbl) {
        tbl = document.createElement("table");
        tbl.className = "terms";
        tbl.dataset.testid = "bound-terms";
        el.append(tbl);
      }
      const rows = [`<tr><th>layer</th><th>KL (nats)</th><th>compression (nats)</th><th>propagation (nats)</th></tr>`];
      // one precision a column, as the depth table's
      const dec = [0, 1, 2].map((j) => columnDecimals(p.terms.map((t) => t[j])));
      p.terms.forEach((t, l) => rows.push(`<tr><td>${l + 1}</td>${dec.map((d, j) => `<td>${fixed(t[j], d)}</td>`).join("")}</tr>`));
      rows.push(`<tr class="sum"><td colspan="4">likelihood ${fmt(p.lik)} − penalties ${fmt(p.lik - p.bound)} = bound ${fmt(p.bound)} nats</td></tr>`);
      const html = rows.join("");
      if (tbl.dataset.html !== html) { tbl.innerHTML = html; tbl.dataset.html = html; }
    },
  };
});
