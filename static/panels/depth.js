// Depth panel: the paper's step figure live — the session's data fitted
// by 1-, 2- and 3-layer models (op "compare", three restarts each, chosen
// by the bound), drawn side by side on shared axes, with a table of their
// bounds, restarts and rise widths.
import { register } from "./registry.js";
import { Plot, C, unitsOf, withUnit, fmt, columnDecimals, fixed, legend } from "../plot.js";

register("depth", (el, app) => {
  const plot = new Plot(el.querySelector("canvas"), { l: 56, r: 10, t: 40, b: 40 });
  const tools = el.querySelector(".panel-tools");
  const btn = document.createElement("button");
  btn.type = "button";
  btn.dataset.testid = "compare";
  btn.textContent = "Compare 1, 2, 3 layers";
  btn.title = "Fit this data with 1, 2 and 3 layers (three restarts each, the best by the bound), side by side";
  const start = () => { if (!app.send({ op: "compare" })) return; cmp = null; btn.disabled = true; app.redraw(); };
  btn.addEventListener("click", start);
  tools.append(btn);
  const table = document.createElement("table");
  table.className = "terms depth-table";
  table.dataset.testid = "depth-table";
  el.querySelector(".legend").after(table);
  let cmp = null; // the latest "compare" message: this panel's own state
  app.on("compare", (m) => { cmp = m; if (m.done) btn.disabled = false; app.redraw(); });

  const fmtRise = (v) => (v == null ? "–" : fmt(v));
  // One precision a column, so that its rows line up and rows that differ
  // read differently; the restarts' bounds share the bound column's, so
  // that the kept one (bold) reads as the depth's bound.
  function showTable() {
    if (!cmp) { table.innerHTML = ""; return; }
    const col = (f) => columnDecimals(cmp.depths.map(f));
    const db = col((d) => d.bound), dr = col((d) => d.rise), dov = col((d) => d.overshoot), dt = columnDecimals(cmp.depths.map((d) => d.seconds), 3, 0);
    const cell = (v, d, pending = "–") => (v == null ? pending : fixed(v, d));
    const rows = cmp.depths.map((d) => {
      const rs = d.bounds.map((b, r) => (b == null ? "…" : (r === d.best ? `<strong>${fixed(b, db)}</strong>` : fixed(b, db)))).join(" · ");
      const its = d.iters.reduce((a, b) => a + b, 0);
      return `<tr data-testid="depth-row-${d.layers}"><th>${d.layers} layer${d.layers > 1 ? "s" : ""}</th><td>${cell(d.bound, db, "…")}</td>` +
        `<td>${rs}</td><td>${cell(d.rise, dr)}</td><td>${cell(d.overshoot, dov)}</td><td>${d.done ? (d.error ? `failed: ${d.error}` : d.status) : `${its} iterations…`}</td><td>${cell(d.seconds, dt)} s</td></tr>`;
    }).join("");
    table.innerHTML = `<tr><th></th><th>bound (nats)</th><th>restarts' bounds (kept in bold)</th><th>rise width</th><th>overshoot</th><th>stopped by</th><th>time</th></tr>${rows}`;
  }

  // startOnce compares the depths unless a comparison of these data is
  // done or under way.
  function startOnce() {
    const st = app.state.setup;
    if (app.state.follower || btn.disabled || !st || st.q !== 1 || st.d !== 1 || (cmp && cmp.data_id === st.data_id)) return;
    start();
  }
  // In presentation mode the comparison of small data starts as soon as
  // they arrive, so that the depth slide is not blank for the seconds its
  // fits take when it is first shown.
  const AUTO_ROWS = 2000;
  let auto = -1; // the data_id last started for

  return {
    // start: the depth slide, a lesson step that compares.
    start: startOnce,
    shown(name) { if (name === "depth") this.start(); },
    // done: a comparison of the current data has finished (its figure can
    // be downloaded).
    done() { return !!cmp && cmp.done && cmp.data_id === app.state.setup?.data_id; },
    draw(s) {
      const { setup } = s;
      btn.hidden = !!s.follower;
      if (setup && auto !== setup.data_id && setup.n <= AUTO_ROWS && document.body.classList.contains("present")) { auto = setup.data_id; startOnce(); }
      legend(el.querySelector(".legend"), [
        { label: "data", color: C.data, kind: "dot" },
        { label: "predictive mean of the kept restart", short: "mean", color: C.mean, kind: "line" },
        { label: "± 2 sd (noise included)", short: "±2 sd", color: C.band, kind: "band" },
        { label: "rise: the 10–90 % rise width of the mean, in the input's units", short: "rise: 10–90 % width", color: C.muted, kind: "none" },
        { label: "overshoot: how far the mean goes beyond the data's two levels (negative: it stays inside)", short: "overshoot beyond the levels", color: C.muted, kind: "none" },
      ]);
      showTable();
      const over = el.querySelector(".overlay");
      // until a comparison of this data is done the panel is a line of
      // text, not an empty plot (style.css: #panel-depth.idle)
      el.classList.toggle("idle", !cmp || !cmp.done || cmp.data_id !== setup?.data_id);
      if (!setup || !plot.begin()) return;
      btn.hidden = setup.q !== 1 || setup.d !== 1 || !!s.follower;
      if (!cmp || cmp.data_id !== setup.data_id) {
        over.textContent = setup.q === 1 && setup.d === 1 ? (btn.disabled ? "fitting…" : s.follower ? "The presenter has not compared the depths yet" : "Press “Compare 1, 2, 3 layers” (or key 3)") : "needs data with one input and one output";
        return;
      }
      over.textContent = cmp.done ? "" : "fitting 1, 2 and 3 layers…";
      if (!cmp.done) return;
      const G = cmp.g, xs = cmp.x, N = setup.n;
      let lo = Infinity, hi = -Infinity;
      for (let n = 0; n < N; n++) { lo = Math.min(lo, setup.y[n]); hi = Math.max(hi, setup.y[n]); }
      for (const d of cmp.depths) {
        if (!d.mean) continue;
        for (let i = 0; i < G; i++) { lo = Math.min(lo, d.mean[i] - 2 * d.sd[i]); hi = Math.max(hi, d.mean[i] + 2 * d.sd[i]); }
      }
      const pad = 0.05 * (hi - lo);
      const ux = unitsOf(setup.norm_x.mean[0], setup.norm_x.scale[0]);
      const uy = unitsOf(setup.norm_y.mean[0], setup.norm_y.scale[0]);
      const K = cmp.depths.length, gapPx = 46, W = (plot.w - plot.m.l - plot.m.r - gapPx * (K - 1)) / K;
      const ctx = plot.ctx;
      cmp.depths.forEach((d, k) => {
        const l = plot.m.l + k * (W + gapPx);
        plot.area(xs[0], xs[G - 1], lo - pad, hi + pad, { l, r: l + W, t: plot.m.t, b: plot.h - plot.m.b });
        plot.axes({ xlabel: withUnit(setup.input_names[0] || "x", setup.input_unit), ylabel: k === 0 ? withUnit(setup.output_names[0] || "y", setup.output_unit) : "", ux, uy });
        ctx.fillStyle = C.ink;
        ctx.font = "bold 13px system-ui, sans-serif";
        plot.text(`${d.layers} layer${d.layers > 1 ? "s" : ""}`, l, plot.m.t - 22);
        // A narrow plot (three on a projector's 1024 px) gets smaller type
        // rather than a line that runs into its neighbour.
        const line = `bound ${d.bound != null ? fmt(d.bound) : "–"} nats · rise ${fmtRise(d.rise)}`;
        ctx.font = "12px system-ui, sans-serif";
        const wide = ctx.measureText(line).width, room = W + (k < K - 1 ? gapPx - 8 : plot.m.r - 2);
        if (wide > room) ctx.font = `${Math.max(7, (12 * room) / wide).toFixed(1)}px system-ui, sans-serif`;
        ctx.fillStyle = C.muted;
        plot.text(line, l, plot.m.t - 7);
        plot.clip(() => {
          if (d.mean) {
            plot.band(G, (i) => xs[i], (i) => d.mean[i] - 2 * d.sd[i], (i) => d.mean[i] + 2 * d.sd[i], C.band);
            plot.line(G, (i) => xs[i], (i) => d.mean[i], C.mean, 2);
          }
          ctx.fillStyle = C.data;
          for (let n = 0; n < N; n++) {
            ctx.beginPath(); ctx.arc(plot.sx(setup.x[n]), plot.sy(setup.y[n]), 2.4, 0, 2 * Math.PI); ctx.fill();
          }
        });
      });
    },
  };
});
