// Fit panel: data, and the final message's mean ± 2 sd over the input
// range. With "samples through the network" (the "samples" view, which
// followers mirror) it also shows what the whole deep GP predicts, by
// sampling through every layer: a shading of its density, marks along
// the top where it has two or more modes, sample paths (functions drawn
// through every layer, which switch between the modes where the
// prediction is bimodal), over the data's range and as much again on
// either side as the paper's step figure, and beside the fit a slice at
// one input — the samples' density against the Gaussian final message
// there, two humps against one. The input is picked by dragging the
// slice's marker (by default the input where the fit rises most steeply:
// a step's edge).
import { register, dimSelect } from "./registry.js";
import { layerTitle } from "./layer.js";
import { Plot, C, StickyRange, unitsOf, withUnit, legend, fmt, canvasPoint, clientPoint } from "../plot.js";

const HIT = 8; // px radius for grabbing a data point or the slice's marker
// Samples per input: a few thousand when the model has stopped, so that a
// slice's humps are not noise (2000 cost 0.34 s of one core on the step
// demo), fewer and at most every 1.5 s while it is optimised (500: 0.09 s).
const SLICE_SAMPLES = 2000, LIVE_SAMPLES = 500, LIVE_EVERY = 1500;

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
  let press = null; // {n (data point or −1, −2: the slice's marker), px, py, x, y, moved}
  let main = null;  // the fit's scale as last drawn {sx, sy, ix, iy, box}
  let sliceX = null; // the slice's input (model units) as drawn
  const editable = () => {
    const st = app.state.setup;
    return st && st.q === 1 && st.d === 1 && main && !app.state.follower;
  };
  const pos = (ev) => canvasPoint(canvas, ev);
  function pointAt(px, py) {
    const st = app.state.setup;
    let best = -1, bd = HIT * HIT;
    for (let n = 0; n < st.n; n++) {
      const dx = main.sx(st.x[n]) - px, dy = main.sy(st.y[n]) - py;
      if (dx * dx + dy * dy <= bd) { bd = dx * dx + dy * dy; best = n; }
    }
    return best;
  }
  const onMarker = (px, py) => sliceX != null && main && Math.abs(main.sx(sliceX) - px) <= HIT && py <= main.box.t + 16 && py >= main.box.t - 4;
  const inside = (px, py) => main && px >= main.box.l && px <= main.box.r && py >= main.box.t && py <= main.box.b;
  canvas.addEventListener("pointerdown", (ev) => {
    if (!main || ev.button !== 0) return;
    const [px, py] = pos(ev);
    if (onMarker(px, py)) { // anyone may move the slice (a follower's own view)
      ev.preventDefault();
      press = { n: -2, px, py, x: sliceX, moved: false };
      canvas.setPointerCapture(ev.pointerId);
      return;
    }
    if (!editable()) return;
    const n = pointAt(px, py);
    if (n < 0 && !inside(px, py)) return;
    ev.preventDefault();
    if (n >= 0 && (ev.altKey || ev.shiftKey)) {
      app.send({ op: "remove_data", index: n });
      return;
    }
    press = { n, px, py, x: main.ix(px), y: main.iy(py), moved: false };
    canvas.setPointerCapture(ev.pointerId);
  });
  canvas.addEventListener("pointermove", (ev) => {
    const [px, py] = pos(ev);
    if (!press) {
      if (!main) return;
      if (onMarker(px, py)) { canvas.style.cursor = "ew-resize"; canvas.title = "Drag to choose the input the slice shows"; return; }
      if (!editable()) { canvas.style.cursor = ""; canvas.title = ""; return; }
      const n = pointAt(px, py);
      canvas.style.cursor = n >= 0 ? "grab" : inside(px, py) ? "copy" : "";
      canvas.title = n >= 0 ? "Drag to move this data point; Alt- or Shift-click to remove it" : "Click to add a data point here";
      return;
    }
    if (!press.moved && (px - press.px) ** 2 + (py - press.py) ** 2 < 16) return;
    press.moved = true;
    press.x = main.ix(px); press.y = main.iy(py);
    if (press.n === -2) app.setSliceAt(Math.min(main.x1, Math.max(main.x0, press.x)), true);
    app.redraw();
  });
  canvas.addEventListener("pointerup", () => {
    if (!press) return;
    const p = press;
    press = null;
    if (p.n === -2) { if (p.moved) app.setSliceAt(sliceX); }
    else if (p.n >= 0 && p.moved) app.send({ op: "move_data", index: p.n, x: [p.x], y: [p.y] });
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

  // Samples through the whole deep GP (Monte Carlo, op "fit_density"):
  // the "samples" view, which the checkbox (and the key 2) turns on.
  const densLabel = document.createElement("label");
  densLabel.title = "Draw what the whole deep GP predicts, by sampling through every layer (Monte Carlo), beside the Gaussian final message (key 2)";
  const densBox = document.createElement("input");
  densBox.type = "checkbox";
  densBox.dataset.testid = "fit-density";
  const long = document.createElement("span"), short = document.createElement("span");
  long.className = "long"; long.textContent = " samples through the network";
  short.className = "short"; short.textContent = " samples";
  densLabel.append(densBox, long, short);
  tools.prepend(densLabel);
  let dens = null, asked = null; // asked: {id, at, key}
  const modelKey = (s) => `${s.setup?.data_id}|${s.frame?.iter}|${s.frame?.bound}`;
  densBox.addEventListener("change", () => app.setView(densBox.checked ? "samples" : "live"));
  app.on("fit_density", (m) => {
    if (m.error) { if (asked && m.applied === asked.id) asked = null; return; }
    // The presenter's own answer, or (a follower) the presenter's.
    if (asked && m.applied === asked.id) asked = null;
    dens = { ...m, key: m.data_id + "|" + m.iter, at: performance.now() };
    app.redraw();
  });
  function askDensity(s) {
    if (s.follower) return; // followers get the presenter's
    const now = performance.now(), live = s.running || s.frame?.held;
    if (asked && now - asked.at < 8000) return; // one in flight (8 s: a lost reply)
    if (dens && dens.data_id === s.setup?.data_id && dens.iter === s.frame?.iter && (live || dens.samples >= SLICE_SAMPLES)) return;
    if (live && dens && now - (dens.at ?? 0) < LIVE_EVERY) return;
    const id = app.send({ op: "fit_density", samples: live ? LIVE_SAMPLES : SLICE_SAMPLES });
    if (id) asked = { id, at: now, key: modelKey(s) };
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
        ctx.fillStyle = `rgba(${r}, ${g}, ${b}, ${(0.45 * Math.sqrt(a)).toFixed(3)})`;
        const y0 = plot.sy(dens.edges[k]), y1 = plot.sy(dens.edges[k + 1]);
        ctx.fillRect(x0, Math.min(y0, y1), x1 - x0 + 0.5, Math.abs(y1 - y0) + 0.5);
      }
    }
  }
  // steepest returns the grid input where the fit's mean rises or falls
  // most steeply: a step's edge.
  function steepest(f) {
    let best = 1, bs = -1;
    for (let i = 1; i < f.g; i++) {
      const s = Math.abs(f.mean[i * f.d] - f.mean[(i - 1) * f.d]) / (f.x[i] - f.x[i - 1]);
      if (s > bs) { bs = s; best = i; }
    }
    return (f.x[best] + f.x[best - 1]) / 2;
  }
  // edge is the slice's default: the input nearest the fit's steepest
  // point where the samples have two or more modes, else that point.
  function edge(f) {
    const x0 = steepest(f);
    let best = null;
    for (let i = 0; i < dens.g; i++) {
      const x = dens.x[i];
      if (dens.modes[i] >= 2 && x >= f.x[0] && x <= f.x[f.g - 1] && (best == null || Math.abs(x - x0) < Math.abs(best - x0))) best = x;
    }
    return best ?? x0;
  }
  // column returns the density grid's column nearest x.
  function column(x) {
    let best = 0;
    for (let i = 1; i < dens.g; i++) if (Math.abs(dens.x[i] - x) < Math.abs(dens.x[best] - x)) best = i;
    return best;
  }
  function interp(f, x, arr) {
    const G = f.g;
    if (x <= f.x[0]) return arr[0];
    for (let i = 1; i < G; i++) {
      if (x <= f.x[i]) {
        const t = (x - f.x[i - 1]) / (f.x[i] - f.x[i - 1]);
        return arr[(i - 1) * f.d + dim] * (1 - t) + arr[i * f.d + dim] * t;
      }
    }
    return arr[(G - 1) * f.d + dim];
  }

  // drawSlice draws, in box (sharing the fit's output axis), the samples'
  // density at the slice's input against the Gaussian final message there.
  function drawSlice(ctx, box, f, uy) {
    const i = column(sliceX), B = dens.b;
    const p = (k) => dens.density[i * B + k];
    const mean = interp(f, sliceX, f.mean), v = Math.max(1e-12, interp(f, sliceX, f.var));
    const gauss = (y) => Math.exp(-0.5 * (y - mean) ** 2 / v) / Math.sqrt(2 * Math.PI * v);
    // smoothed over three bins: a histogram of a few thousand samples
    const sm = [];
    for (let k = 0; k < B; k++) sm.push((p(Math.max(0, k - 1)) + 2 * p(k) + p(Math.min(B - 1, k + 1))) / 4);
    let peak = gauss(mean);
    for (const q of sm) peak = Math.max(peak, q);
    const sx = (d) => box.l + (d / (peak * 1.08)) * (box.r - box.l);
    ctx.save();
    ctx.beginPath(); ctx.rect(box.l, box.t, box.r - box.l, box.b - box.t); ctx.clip();
    ctx.fillStyle = "#f8fafc"; ctx.fillRect(box.l, box.t, box.r - box.l, box.b - box.t);
    // the samples: a filled profile
    ctx.beginPath(); ctx.moveTo(box.l, plot.sy(dens.edges[0]));
    for (let k = 0; k < B; k++) ctx.lineTo(sx(sm[k]), plot.sy((dens.edges[k] + dens.edges[k + 1]) / 2));
    ctx.lineTo(box.l, plot.sy(dens.edges[B]));
    ctx.closePath();
    const [r, g, b] = C.density;
    ctx.fillStyle = `rgba(${r}, ${g}, ${b}, 0.25)`; ctx.fill();
    ctx.strokeStyle = C.mc; ctx.lineWidth = 1.8;
    ctx.beginPath();
    for (let k = 0; k < B; k++) ctx.lineTo(sx(sm[k]), plot.sy((dens.edges[k] + dens.edges[k + 1]) / 2));
    ctx.stroke();
    // the Gaussian message
    ctx.strokeStyle = C.mean; ctx.lineWidth = 2.2;
    ctx.beginPath();
    const y0 = plot.iy(box.b), y1 = plot.iy(box.t);
    for (let j = 0; j <= 160; j++) { const y = y0 + (y1 - y0) * j / 160; ctx.lineTo(sx(gauss(y)), plot.sy(y)); }
    ctx.stroke();
    ctx.restore();
    ctx.strokeStyle = C.axis; ctx.lineWidth = 1;
    ctx.strokeRect(box.l + 0.5, box.t + 0.5, box.r - box.l - 1, box.b - box.t - 1);
    const ux = unitsOf(app.state.setup.norm_x.mean[0], app.state.setup.norm_x.scale[0]);
    ctx.fillStyle = C.ink; ctx.textAlign = "center"; ctx.textBaseline = "bottom";
    plot.text(`density at ${app.state.setup.input_names[0] || "x"} = ${fmt(ux.to(sliceX))}`, (box.l + box.r) / 2, plot.h - 3);
    const modes = dens.modes[i];
    // how much wider the samples spread than the Gaussian
    let m0 = 0, m1 = 0, m2 = 0;
    for (let k = 0; k < B; k++) { const y = (dens.edges[k] + dens.edges[k + 1]) / 2, wk = p(k) * (dens.edges[k + 1] - dens.edges[k]); m0 += wk; m1 += wk * y; m2 += wk * y * y; }
    const sdS = m0 > 0 ? Math.sqrt(Math.max(0, m2 / m0 - (m1 / m0) ** 2)) : 0, wider = sdS / Math.sqrt(v);
    ctx.textBaseline = "top"; ctx.fillStyle = modes >= 2 || wider > 2 ? C.mc : C.muted; ctx.font = "600 12px system-ui, sans-serif";
    const [l1, l2] = modes >= 2 ? [`${modes} humps`, "vs one Gaussian"] : wider > 2 ? [`samples ${wider.toFixed(1)}×`, "wider than the Gaussian"] : ["one hump,", "as the Gaussian"];
    plot.text(l1, (box.l + box.r) / 2, box.t + 4);
    ctx.font = "12px system-ui, sans-serif";
    plot.text(l2, (box.l + box.r) / 2, box.t + 19);
    ctx.font = "12px system-ui, sans-serif";
    return modes;
  }

  return {
    // handlePoints returns the client positions of what can be dragged
    // here: the data points (when they can be edited) and the slice's
    // marker (the edit readout keeps clear of them).
    handlePoints() {
      const st = app.state.setup;
      if (!main || !st) return [];
      const out = [];
      if (editable()) for (let n = 0; n < st.n; n++) out.push(clientPoint(canvas, main.sx(st.x[n]), main.sy(st.y[n * st.d + dim])));
      if (sliceX != null) out.push(clientPoint(canvas, main.sx(sliceX), main.box.t + 6));
      return out;
    },
    // sliceClient returns the slice marker's position in client pixels (tests and tours).
    sliceClient: () => (sliceX != null && main ? clientPoint(canvas, main.sx(sliceX), main.box.t + 6) : null),
    slice: () => (sliceX != null && dens ? { x: sliceX, modes: dens.modes[column(sliceX)] } : null),
    density: () => dens,
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
      layerTitle(el.querySelector("h2"), "Fit", "the whole deep GP");
      if (D > 1) dimSelect(tools, "output", D, dim, (v) => { dim = v; yr.reset(); app.redraw(); }, "fit-dim");
      const ux = unitsOf(setup.norm_x.mean[0], setup.norm_x.scale[0]);
      const uy = unitsOf(setup.norm_y.mean[dim], setup.norm_y.scale[dim]);
      const N = setup.n;
      const follower = !!s.follower;
      if (setup.q === 1 && frame.view?.fit) {
        const f = frame.view.fit, G = f.g;
        const m = (i) => f.mean[i * f.d + dim], sd = (i) => Math.sqrt(Math.max(0, f.var[i * f.d + dim]));
        let lo = Infinity, hi = -Infinity;
        for (let i = 0; i < G; i++) { lo = Math.min(lo, m(i) - 2 * sd(i)); hi = Math.max(hi, m(i) + 2 * sd(i)); }
        for (let n = 0; n < N; n++) { const y = setup.y[n * D + dim]; lo = Math.min(lo, y); hi = Math.max(hi, y); }
        const samplesOn = s.show.name === "samples" && dim === 0;
        densBox.checked = samplesOn;
        densBox.disabled = follower;
        densLabel.hidden = false;
        if (samplesOn) askDensity(s);
        const withDensity = samplesOn && dens && dens.data_id === setup.data_id;
        if (withDensity) { lo = Math.min(lo, dens.edges[0]); hi = Math.max(hi, dens.edges[dens.b]); }
        const pad = 0.06 * (hi - lo);
        yr.update(lo - pad, hi + pad);
        // beside the fit, the slice (when there is room)
        const sliceW = withDensity && plot.w > 360 ? Math.min(240, Math.max(110, plot.w * 0.24)) : 0;
        const box = { l: plot.m.l, r: plot.w - plot.m.r - (sliceW ? sliceW + 18 : 0), t: plot.m.t + (withDensity ? 12 : 0), b: plot.h - plot.m.b };
        // the samples span the density's inputs, beyond the data
        const [x0, x1] = withDensity ? [dens.x[0], dens.x[dens.g - 1]] : [f.x[0], f.x[G - 1]];
        main = plot.area(x0, x1, yr.lo, yr.hi, box);
        plot.axes({ xlabel: withUnit(setup.input_names[0] || "x", setup.input_unit), ylabel: withUnit(setup.output_names[dim] || "y", setup.output_unit), ux, uy });
        const ctx = plot.ctx;
        let bimodal = 0;
        plot.clip(() => {
          if (withDensity) {
            drawDensity(ctx);
            for (let p = 0; p < dens.p; p++) plot.line(dens.pg, (i) => dens.path_x[i], (i) => dens.paths[p * dens.pg + i], C.path, 1.1);
            plot.line(G, (i) => f.x[i], (i) => m(i) - 2 * sd(i), C.mean, 1, [5, 4]);
            plot.line(G, (i) => f.x[i], (i) => m(i) + 2 * sd(i), C.mean, 1, [5, 4]);
          } else {
            plot.band(G, (i) => f.x[i], (i) => m(i) - 2 * sd(i), (i) => m(i) + 2 * sd(i), C.band);
          }
          plot.line(G, (i) => f.x[i], m, C.mean, 2.2);
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
        if (withDensity) {
          // where the deep GP has two or more modes: marks along the top
          const dx = (dens.x[dens.g - 1] - dens.x[0]) / (dens.g - 1);
          ctx.fillStyle = C.mc;
          for (let i = 0; i < dens.g; i++) {
            if (dens.modes[i] < 2) continue;
            bimodal++;
            const a = plot.sx(dens.x[i] - dx / 2), b = plot.sx(dens.x[i] + dx / 2);
            ctx.fillRect(a, box.t - 9, Math.max(1.5, b - a), 6);
          }
          sliceX = s.show.at != null && s.show.at >= f.x[0] && s.show.at <= f.x[G - 1] ? s.show.at : edge(f);
          // the slice's marker: a dashed line and a handle on top
          const px = plot.sx(sliceX);
          ctx.save();
          ctx.strokeStyle = C.ink; ctx.lineWidth = 1.2; ctx.setLineDash([4, 3]);
          ctx.beginPath(); ctx.moveTo(px, box.t); ctx.lineTo(px, box.b); ctx.stroke();
          ctx.setLineDash([]);
          ctx.fillStyle = C.ink;
          ctx.beginPath(); ctx.moveTo(px - 6, box.t - 1); ctx.lineTo(px + 6, box.t - 1); ctx.lineTo(px, box.t + 9); ctx.closePath(); ctx.fill();
          ctx.restore();
          if (sliceW) drawSlice(ctx, { l: box.r + 18, r: plot.w - plot.m.r, t: box.t, b: box.b }, f, uy);
          main = { ...main, box, x0, x1 };
        } else {
          sliceX = null;
          main = { ...main, box, x0: f.x[0], x1: f.x[G - 1] };
        }
        resetBtn.hidden = !setup.edited || follower;
        const items = [
          { label: D === 1 && !follower ? "data (click to add, drag to move, Alt-click to remove)" : "data", short: "data", color: C.data, kind: "dot" },
          { label: "final message mean", short: "mean", color: C.mean, kind: "line" },
          { label: withDensity ? "± 2 sd of the Gaussian final message (dashed)" : "± 2 sd of the final message", short: "±2 sd", color: C.band, kind: withDensity ? "dash" : "band" },
        ];
        if (withDensity) {
          items.push({ label: `samples through every layer (${dens.samples} per input)`, short: "samples", color: `rgba(${C.density.join(", ")}, 0.45)`, kind: "band" });
          if (dens.p) items.push({ label: `${dens.p} sample paths: functions drawn through every layer (without the layers' noise), each continuous`, short: `${dens.p} paths`, color: C.path, kind: "line" });
          items.push({ label: `two or more modes: ${bimodal} of ${dens.g} inputs, where one Gaussian cannot follow`, short: `≥ 2 modes (${bimodal})`, color: C.mc, kind: "tick" });
          if (sliceW) items.push({ label: "slice: samples (black) vs the Gaussian message (blue) at the marked input — drag ▼ to move it", short: "slice: samples vs Gaussian", color: C.mc, kind: "line" });
        } else if (samplesOn) {
          items.push({ label: "sampling through every layer…", short: "sampling…", color: `rgba(${C.density.join(", ")}, 0.45)`, kind: "band" });
        }
        legend(el.querySelector(".legend"), items);
      } else {
        densLabel.hidden = true;
        main = null;
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
        plot.axes({ xlabel: withUnit(`observed ${setup.output_names[dim]}`, setup.output_unit), ylabel: withUnit("final message mean ± 2 sd", setup.output_unit), ux: uy, uy });
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
          { label: "final message mean vs observed", short: "mean vs observed", color: C.mean, kind: "dot" },
          { label: "± 2 sd", color: C.band, kind: "band" },
        ]);
      }
      el.querySelector(".overlay").textContent = frame.eval_error ? `⚠ ${frame.eval_error}` : "";
    },
  };
});
export { fmt };
