// Fit panel: data, and the final message's mean ± 2 sd over the input range.
import { register, dimSelect } from "./registry.js";
import { Plot, C, StickyRange, unitsOf, legend, fmt, canvasPoint } from "../plot.js";

const HIT = 8; // px radius for grabbing a data point

register("fit", (el, app) => {
  const canvas = el.querySelector("canvas");
  const plot = new Plot(canvas);
  const tools = el.querySelector(".panel-tools");
  const yr = new StickyRange();
  let dim = 0;

  // Editing the data (one input, one output): click to add a point, drag
  // one to move it, Alt- or Shift-click one to remove it. Coordinates are
  // the model's normalised units, as the plot's. A drag is sent once, when
  // it ends, so it is one edit.
  let press = null; // {n (data point or −1), px, py, x, y, moved}
  const editable = () => {
    const st = app.state.setup;
    return st && st.q === 1 && st.d === 1 && plot.sx;
  };
  const pos = (ev) => canvasPoint(canvas, ev);
  function pointAt(px, py) {
    const st = app.state.setup;
    let best = -1, bd = HIT * HIT;
    for (let n = 0; n < st.n; n++) {
      const dx = plot.sx(st.x[n]) - px, dy = plot.sy(st.y[n]) - py;
      if (dx * dx + dy * dy <= bd) { bd = dx * dx + dy * dy; best = n; }
    }
    return best;
  }
  const inside = (px, py) => plot.box && px >= plot.box.l && px <= plot.box.r && py >= plot.box.t && py <= plot.box.b;
  canvas.addEventListener("pointerdown", (ev) => {
    if (!editable() || ev.button !== 0) return;
    const [px, py] = pos(ev);
    const n = pointAt(px, py);
    if (n < 0 && !inside(px, py)) return;
    ev.preventDefault();
    if (n >= 0 && (ev.altKey || ev.shiftKey)) {
      app.send({ op: "remove_data", index: n });
      return;
    }
    press = { n, px, py, x: plot.ix(px), y: plot.iy(py), moved: false };
    canvas.setPointerCapture(ev.pointerId);
  });
  canvas.addEventListener("pointermove", (ev) => {
    const [px, py] = pos(ev);
    if (!press) {
      if (!editable()) return;
      const n = pointAt(px, py);
      canvas.style.cursor = n >= 0 ? "grab" : inside(px, py) ? "copy" : "";
      canvas.title = n >= 0 ? "Drag to move this data point; Alt- or Shift-click to remove it" : "Click to add a data point here";
      return;
    }
    if (!press.moved && (px - press.px) ** 2 + (py - press.py) ** 2 < 16) return;
    press.moved = true;
    press.x = plot.ix(px); press.y = plot.iy(py);
    app.redraw();
  });
  canvas.addEventListener("pointerup", () => {
    if (!press) return;
    const p = press;
    press = null;
    if (p.n >= 0 && p.moved) app.send({ op: "move_data", index: p.n, x: [p.x], y: [p.y] });
    else if (p.n < 0 && !p.moved) app.send({ op: "add_data", x: [p.x], y: [p.y] });
    app.redraw();
  });
  canvas.addEventListener("pointercancel", () => { press = null; app.redraw(); });

  const resetBtn = document.createElement("button");
  resetBtn.type = "button";
  resetBtn.textContent = "Reset data";
  resetBtn.dataset.testid = "reset-data";
  resetBtn.title = "Back to the original data points (the model keeps its parameters)";
  resetBtn.hidden = true;
  resetBtn.addEventListener("click", () => app.send({ op: "reset_data" }));
  tools.append(resetBtn);

  // Samples through the whole deep GP (Monte Carlo, op "fit_density"): a
  // shading of the predictive density next to the Gaussian final message,
  // so a class sees where the deep GP is bimodal and the message is not.
  // One request in flight; a new one when the model has changed.
  const densLabel = document.createElement("label");
  densLabel.title = "Draw what the whole deep GP predicts, by sampling through every layer (Monte Carlo), beside the Gaussian final message";
  const densBox = document.createElement("input");
  densBox.type = "checkbox";
  densBox.dataset.testid = "fit-density";
  densLabel.append(densBox, " samples through the network");
  tools.prepend(densLabel);
  let dens = null, asked = null; // asked: {id, at, key}
  const modelKey = (s) => `${s.setup?.data_id}|${s.frame?.iter}|${s.frame?.bound}`;
  densBox.addEventListener("change", () => { if (!densBox.checked) dens = null; app.redraw(); });
  app.on("fit_density", (m) => {
    if (asked && m.applied === asked.id) { dens = m.error ? null : { ...m, key: asked.key, at: performance.now() }; asked = null; }
    app.redraw();
  });
  function askDensity(s) {
    const now = performance.now();
    if (asked && now - asked.at < 5000) return; // one in flight (5 s: a lost reply)
    const key = modelKey(s);
    if (dens && dens.key === key) return;
    if (dens && now - (dens.at ?? 0) < 400) return; // at most ~2.5 per second while training
    asked = { id: app.send({ op: "fit_density", samples: 500 }), at: now, key };
  }
  function drawDensity(ctx) {
    const G = dens.g, B = dens.b, dx = (dens.x[G - 1] - dens.x[0]) / (G - 1);
    const [r, g, b] = C.density;
    for (let i = 0; i < G; i++) {
      let top = 0;
      for (let k = 0; k < B; k++) top = Math.max(top, dens.density[i * B + k]);
      if (!(top > 0)) continue;
      const x0 = plot.sx(dens.x[i] - dx / 2), x1 = plot.sx(dens.x[i] + dx / 2);
      for (let k = 0; k < B; k++) {
        const a = dens.density[i * B + k] / top;
        if (a < 0.02) continue;
        ctx.fillStyle = `rgba(${r}, ${g}, ${b}, ${(0.6 * Math.sqrt(a)).toFixed(3)})`;
        const y0 = plot.sy(dens.edges[k]), y1 = plot.sy(dens.edges[k + 1]);
        ctx.fillRect(x0, Math.min(y0, y1), x1 - x0 + 0.5, Math.abs(y1 - y0) + 0.5);
      }
    }
  }

  return {
    draw(s) {
      const { setup, frame } = s;
      if (!setup || !frame || !plot.begin()) return;
      const D = setup.d;
      let cap = el.querySelector(".caption");
      if (!cap) {
        cap = document.createElement("p");
        cap.className = "caption";
        el.querySelector(".panel-head").after(cap);
      }
      if (cap.textContent !== setup.description) cap.textContent = setup.description;
      if (D > 1) dimSelect(tools, "output", D, dim, (v) => { dim = v; yr.reset(); app.redraw(); }, "fit-dim");
      const ux = unitsOf(setup.norm_x.mean[0], setup.norm_x.scale[0]);
      const uy = unitsOf(setup.norm_y.mean[dim], setup.norm_y.scale[dim]);
      const N = setup.n;
      if (setup.q === 1 && frame.view?.fit) {
        const f = frame.view.fit, G = f.g;
        const m = (i) => f.mean[i * f.d + dim], sd = (i) => Math.sqrt(Math.max(0, f.var[i * f.d + dim]));
        let lo = Infinity, hi = -Infinity;
        for (let i = 0; i < G; i++) { lo = Math.min(lo, m(i) - 2 * sd(i)); hi = Math.max(hi, m(i) + 2 * sd(i)); }
        for (let n = 0; n < N; n++) { const y = setup.y[n * D + dim]; lo = Math.min(lo, y); hi = Math.max(hi, y); }
        const pad = 0.06 * (hi - lo);
        yr.update(lo - pad, hi + pad);
        plot.area(f.x[0], f.x[G - 1], yr.lo, yr.hi);
        plot.axes({ xlabel: setup.input_names[0] || "x", ylabel: setup.output_names[dim] || "y", ux, uy });
        const withDensity = densBox.checked && dim === 0;
        densLabel.hidden = false;
        if (withDensity) askDensity(s);
        plot.clip(() => {
          if (withDensity && dens) {
            drawDensity(plot.ctx);
            plot.line(G, (i) => f.x[i], (i) => m(i) - 2 * sd(i), C.mean, 1, [5, 4]);
            plot.line(G, (i) => f.x[i], (i) => m(i) + 2 * sd(i), C.mean, 1, [5, 4]);
          } else {
            plot.band(G, (i) => f.x[i], (i) => m(i) - 2 * sd(i), (i) => m(i) + 2 * sd(i), C.band);
          }
          plot.line(G, (i) => f.x[i], m, C.mean, 2.2);
          const ctx = plot.ctx;
          ctx.fillStyle = C.data;
          for (let n = 0; n < N; n++) {
            if (press && press.moved && press.n === n) continue;
            ctx.beginPath();
            ctx.arc(plot.sx(setup.x[n]), plot.sy(setup.y[n * D + dim]), 2.8, 0, 2 * Math.PI);
            ctx.fill();
          }
          if (press && press.moved && press.n >= 0) { // the point being dragged
            ctx.strokeStyle = C.data; ctx.lineWidth = 1.5;
            ctx.beginPath(); ctx.arc(plot.sx(press.x), plot.sy(press.y), 4.5, 0, 2 * Math.PI); ctx.stroke();
          }
        });
        resetBtn.hidden = !setup.edited;
        const items = [
          { label: D === 1 ? "data (click to add, drag to move, Alt-click to remove)" : "data", color: C.data, kind: "dot" },
          { label: "final message mean", color: C.mean, kind: "line" },
          { label: withDensity && dens ? "± 2 sd of the final message (dashed)" : "± 2 sd of the final message", color: C.band, kind: "band" },
        ];
        if (withDensity && dens) {
          const bimodal = Array.from(dens.modes).filter((k) => k >= 2).length;
          items.push({ label: `the deep GP's prediction, ${dens.samples} samples through every layer per input` + (bimodal ? ` — two or more modes at ${bimodal} of ${dens.g} inputs, where the Gaussian message cannot follow` : ""), color: `rgba(${C.density.join(", ")}, 0.5)`, kind: "band" });
        }
        legend(el.querySelector(".legend"), items);
      } else {
        densLabel.hidden = true;
        // Multi-dimensional input: predicted (last message) vs observed.
        const L = frame.layers.length, last = frame.layers[L - 1];
        if (!last.mean) return;
        let lo = Infinity, hi = -Infinity;
        for (let n = 0; n < N; n++) {
          const y = setup.y[n * D + dim], mu = last.mean[n * D + dim];
          lo = Math.min(lo, y, mu); hi = Math.max(hi, y, mu);
        }
        yr.update(lo, hi);
        plot.area(yr.lo, yr.hi, yr.lo, yr.hi);
        plot.axes({ xlabel: `observed ${setup.output_names[dim]}`, ylabel: "final message mean ± 2 sd", ux: uy, uy });
        plot.clip((ctx) => {
          plot.line(2, (i) => (i ? yr.hi : yr.lo), (i) => (i ? yr.hi : yr.lo), C.axis, 1, [4, 4]);
          for (let n = 0; n < N; n++) {
            const y = setup.y[n * D + dim], mu = last.mean[n * D + dim], sd = Math.sqrt(Math.max(0, last.var[n * D + dim]));
            ctx.strokeStyle = C.band; ctx.lineWidth = 1.5;
            ctx.beginPath(); ctx.moveTo(plot.sx(y), plot.sy(mu - 2 * sd)); ctx.lineTo(plot.sx(y), plot.sy(mu + 2 * sd)); ctx.stroke();
            ctx.fillStyle = C.mean;
            ctx.beginPath(); ctx.arc(plot.sx(y), plot.sy(mu), 2.5, 0, 2 * Math.PI); ctx.fill();
          }
        });
        legend(el.querySelector(".legend"), [
          { label: "final message mean vs observed", color: C.mean, kind: "dot" },
          { label: "± 2 sd", color: C.band, kind: "band" },
        ]);
      }
      el.querySelector(".overlay").textContent = frame.eval_error ? `⚠ ${frame.eval_error}` : "";
    },
  };
});
export { fmt };
