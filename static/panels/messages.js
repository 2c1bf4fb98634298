// The message figure, live (issue 5): the paper's Figure "Forward
// propagation of Gaussian messages through a layer". Right top: the
// layer's GP (mean ± 2 sd) with its inducing variables as red bars. Right
// bottom: colour-coded Gaussian inputs, draggable (mean: drag; width: drag
// the ring handle or turn the wheel). Left: for each input, the true
// response density (Monte Carlo, black) and the Gaussian message (in the
// input's colour), with the two penalty terms and W₁ beneath. The server
// computes it (op "message_figure", message type "message_figure", docs/protocol.md) in its own
// goroutine; this panel only draws and sends commands.
import { register, layerUnits } from "./registry.js";
import { Plot, C, fmt, canvasPoint, clientPoint, legend } from "../plot.js";

// The paper's red bars; the inputs' colours come from the server (the
// regression setup's input_colors), the same as the downloaded figure's.
const RED = "#d62728";
const MAX_INPUTS = 8;
const HIT = 9;

const rgba = (hex, a) => {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${n >> 16},${(n >> 8) & 255},${n & 255},${a})`;
};

// penaltyCaption is the line under an input's response: its two penalty
// terms, in nats (the bound's word, as the table's "KL (nats)"), and W₁ in
// the layer's output units (unit: the data's, for the last layer); a
// narrow figure gets the penalties alone, shortened.
export function penaltyCaption(r, narrow, unit = "") {
  if (narrow) return `prop. ${fmt(r.propagation)} · compr. ${fmt(r.compression)} nats`;
  return `propagation ${fmt(r.propagation)} nats · compression ${fmt(r.compression)} nats · W₁ ${fmt(r.w1)}${unit ? ` ${unit}` : ""}`;
}

register("messages", (el, app) => {
  let fig = null; // the latest "message_figure" message: this panel's own state
  app.on("message_figure", (m) => { fig = m; });
  const color = (k) => { const c = app.state.setup?.view?.input_colors || ["#1f77b4"]; return c[k % c.length]; };
  const canvas = el.querySelector("canvas");
  const plot = new Plot(canvas, { l: 10, r: 10, t: 10, b: 10 });
  const tools = el.querySelector(".panel-tools");
  const body = el.querySelector(".mc-body");
  const table = el.querySelector(".mc-readout tbody");
  const status = el.querySelector(".mc-status");
  const layerSel = el.querySelector("[data-testid=mc-layer]");
  const samplesSel = el.querySelector("[data-testid=mc-samples]");
  const toggle = el.querySelector("[data-testid=mc-toggle]");

  let open = false;
  let layer = -1;
  let inputs = null;   // [{mean, var}] in model units: what the user sees and drags
  let drag = null;     // {k, mode: "mean"|"sd", x0, mean0, sd0}
  let pending = false, sendQueued = false;
  let lastSentId = 0;
  let session = -1;
  let boxes = null;    // pixel boxes and scales of the last draw, for hit tests
  let hover = -1;

  // ---- commands ----
  function sendInputs() {
    sendQueued = false;
    if (!pending || !open || !inputs) return;
    pending = false;
    lastSentId = app.send({ op: "message_figure", layer, inputs: inputs.map((g) => ({ mean: g.mean, var: g.var })), samples: Number(samplesSel.value) });
  }
  function scheduleSend() {
    pending = true;
    if (!sendQueued) { sendQueued = true; requestAnimationFrame(sendInputs); }
  }
  function start() {
    if (app.state.follower) return; // followers get the presenter's figures
    const cmd = { op: "message_figure", layer, samples: Number(samplesSel.value) };
    if (inputs) cmd.inputs = inputs.map((g) => ({ mean: g.mean, var: g.var }));
    lastSentId = app.send(cmd);
  }
  let bySlide = false; // opened by the message-figure slide (closed when it goes)
  function setOpen(v) {
    open = v;
    const follower = !!app.state.follower;
    toggle.textContent = v ? "Close" : "Open the message figure";
    toggle.setAttribute("aria-pressed", String(v));
    toggle.hidden = follower;
    body.hidden = !v;
    for (const b of el.querySelectorAll("button:not([data-testid=mc-toggle]), select")) b.disabled = !v || follower;
    if (v) { session = app.state.session; start(); } else if (!follower) app.send({ op: "message_figure_off" });
    app.redraw();
  }
  toggle.addEventListener("click", () => setOpen(!open));
  layerSel.addEventListener("change", () => { layer = Number(layerSel.value); inputs = null; fig = null; start(); });
  samplesSel.addEventListener("change", () => start());
  for (const b of el.querySelectorAll("[data-preset]")) {
    b.addEventListener("click", () => { lastSentId = app.send({ op: "message_figure_preset", layer, name: b.dataset.preset, samples: Number(samplesSel.value) }); inputs = null; });
  }
  el.querySelector("[data-testid=mc-add]").addEventListener("click", () => {
    if (!inputs || inputs.length >= MAX_INPUTS) return;
    const m = fig;
    const x = m?.gp ? (m.gp.x[0] + m.gp.x[m.gp.g - 1]) / 2 : 0;
    const sd = m?.gp ? (m.gp.x[m.gp.g - 1] - m.gp.x[0]) / 20 : 0.1;
    inputs.push({ mean: x, var: sd * sd });
    scheduleSend();
  });
  el.querySelector("[data-testid=mc-remove]").addEventListener("click", () => {
    if (!inputs || inputs.length <= 1) return;
    inputs.pop();
    scheduleSend();
  });

  // ---- dragging the inputs ----
  const pos = (ev) => canvasPoint(canvas, ev);
  function hit(px, py) {
    if (!boxes || !inputs) return null;
    const b = boxes.inp;
    if (px < b.l - HIT || px > b.r + HIT || py < b.t - HIT || py > b.b + HIT) return null;
    // width handles first (small rings), then the nearest curve by its mean
    for (let k = inputs.length - 1; k >= 0; k--) {
      const [hx, hy] = handleXY(k);
      if ((hx - px) ** 2 + (hy - py) ** 2 <= HIT * HIT) return { k, mode: "sd" };
    }
    let best = -1, bd = Infinity;
    for (let k = 0; k < inputs.length; k++) {
      const g = inputs[k], sd = Math.sqrt(g.var);
      const x = boxes.ix(px);
      const y = boxes.inY(k, x);
      const d = Math.abs(boxes.sx(g.mean) - px) / Math.max(8, boxes.sx(g.mean + sd) - boxes.sx(g.mean)) + (py < y - 6 ? 1 : 0);
      if (d < bd) { bd = d; best = k; }
    }
    return best >= 0 && bd < 2.5 ? { k: best, mode: "mean" } : null;
  }
  function handleXY(k) {
    const g = inputs[k], sd = Math.sqrt(g.var);
    return [boxes.sx(g.mean + sd), boxes.inY(k, g.mean + sd)];
  }
  canvas.addEventListener("pointerdown", (ev) => {
    if (app.state.follower) return; // the presenter's inputs
    const [px, py] = pos(ev);
    const h = hit(px, py);
    if (!h) return;
    ev.preventDefault();
    const g = inputs[h.k];
    drag = { ...h, x0: boxes.ix(px), mean0: g.mean, sd0: Math.sqrt(g.var) };
    canvas.setPointerCapture(ev.pointerId);
    canvas.style.cursor = "grabbing";
  });
  canvas.addEventListener("pointermove", (ev) => {
    const [px, py] = pos(ev);
    if (!drag) {
      const h = hit(px, py);
      const k = h ? h.k : -1;
      canvas.style.cursor = h ? (h.mode === "sd" ? "ew-resize" : "grab") : "default";
      if (k !== hover) { hover = k; app.redraw(); }
      return;
    }
    const x = boxes.ix(px), g = inputs[drag.k];
    if (drag.mode === "mean") g.mean = clampMean(drag.mean0 + (x - drag.x0));
    else { const sd = Math.max(1e-3, Math.abs(x - g.mean)); g.var = clampVar(sd * sd); }
    scheduleSend();
    app.redraw();
  });
  const endDrag = () => { if (!drag) return; drag = null; canvas.style.cursor = "grab"; };
  canvas.addEventListener("pointerup", endDrag);
  canvas.addEventListener("pointercancel", endDrag);
  canvas.addEventListener("wheel", (ev) => {
    const [px, py] = pos(ev);
    const h = hit(px, py);
    if (!h) return;
    ev.preventDefault();
    const g = inputs[h.k];
    g.var = clampVar(g.var * Math.exp(Math.sign(ev.deltaY) * 0.2));
    scheduleSend();
    app.redraw();
  }, { passive: false });
  const clampMean = (m) => Math.max(-1000, Math.min(1000, m));
  const clampVar = (v) => Math.max(1e-6, Math.min(1e4, v));

  // ---- drawing ----
  function gauss(x, m, v) { return Math.exp(-0.5 * (x - m) * (x - m) / v) / Math.sqrt(2 * Math.PI * v); }

  function layerOptions(frame) {
    const ok = frame.layers.map((L, i) => (L.q === 1 && L.d === 1 && L.kernel.name === "rbf" ? i : -1)).filter((i) => i >= 0);
    const key = ok.join(",");
    if (layerSel.dataset.key !== key) {
      layerSel.dataset.key = key;
      layerSel.replaceChildren(...ok.map((i) => new Option(`layer ${i + 1}`, String(i))));
    }
    if (!ok.includes(layer)) {
      layer = ok.length ? ok[Math.min(1, ok.length - 1)] : -1; // the demo's middle layer bends most
      inputs = null;
      if (open && layer >= 0) start();
    }
    layerSel.value = String(layer);
    return ok.length > 0;
  }

  function readout(m) {
    const rows = m.inputs.map((r, k) => {
      const tr = document.createElement("tr");
      tr.innerHTML = `<td><i class="sw band"></i> ${k + 1}</td><td>${fmt(r.mean)}</td><td>${fmt(Math.sqrt(r.var))}</td>` +
        `<td data-testid="mc-prop-${k}">${fmt(r.propagation)}</td><td data-testid="mc-comp-${k}">${fmt(r.compression)}</td>` +
        `<td data-testid="mc-w1-${k}">${fmt(r.w1)} <span class="se">± ${fmt(r.w1_se)}</span></td><td>${fmt(r.kl)}</td>` +
        `<td>${fmt(Math.sqrt(r.message.var))} / ${fmt(Math.sqrt(r.mc_var))}</td>`;
      tr.querySelector(".sw").style.setProperty("--c", color(k)); // CSSOM: allowed by the CSP
      return tr;
    });
    table.replaceChildren(...rows);
  }

  return {
    // shown: the page's view changed (app.js); the message-figure slide
    // opens the figure, and closes it again when it goes if it opened it.
    shown(name, follower) {
      if (name === "messages" && !open) { bySlide = true; setOpen(true); }
      else if (name !== "messages" && bySlide && open && !follower) { bySlide = false; setOpen(false); }
    },
    // preset shows the figure of layer li (from 0; −1: the panel's
    // choice) with one of the presets (a lesson step).
    preset(li, name) {
      if (app.state.follower) return;
      if (li >= 0 && app.state.frame?.layers?.[li]?.q === 1) { layer = li; layerSel.value = String(li); }
      if (!open) { bySlide = true; setOpen(true); }
      inputs = null; fig = null;
      lastSentId = app.send({ op: "message_figure_preset", layer, name, samples: Number(samplesSel.value) });
    },
    // inputClient returns input k's peak in client pixels (for tests and tours).
    inputClient(k) {
      if (!boxes || !inputs || k >= inputs.length) return null;
      const g = inputs[k];
      return clientPoint(canvas, boxes.sx(g.mean), (boxes.inY(k, g.mean) + boxes.inp.b) / 2);
    },
    inputs: () => inputs?.map((g) => ({ ...g })) ?? null,
    // downloadQuery is the figure a download draws: this layer, these
    // inputs and samples (null until the figure is open).
    // The URL counts layers from 1 and gives the inputs in the units of the
    // figure's input axis: layer 1's in the data's original units (the
    // wire's are normalised), hidden layers' latent.
    downloadQuery: () => {
      if (!open || !inputs || layer < 0) return null;
      const nx = layer === 0 ? app.state.setup?.norm_x : null;
      const a0 = nx?.scale?.length === 1 ? nx.scale[0] : 1, b0 = nx?.mean?.length === 1 ? nx.mean[0] : 0;
      return {
        layer: String(layer + 1),
        inputs: inputs.map((g) => `${+(g.mean * a0 + b0).toPrecision(6)}:${+(g.var * a0 * a0).toPrecision(6)}`).join(","),
        samples: samplesSel.value,
      };
    },
    // figure returns the latest message-figure message (for tests).
    figure: () => fig,
    draw(s) {
      const f = s.frame;
      if (!f) return;
      if (s.follower && fig && !open) setOpen(true); // the presenter opened it
      if (s.follower && fig && fig.layer !== layer) layer = fig.layer;
      // No layer to show (the explorer's 3-D hidden layers): the button
      // says why rather than opening an empty figure.
      const none = !layerOptions(f), why = "No layer has a 1-D input and output; the message figure needs one.";
      if (toggle.disabled !== (none && !open)) { toggle.disabled = none && !open; toggle.title = toggle.disabled ? why : ""; }
      if (none) { status.textContent = why; return; }
      if (open && s.session !== session) { session = s.session; start(); } // reconnected: a new session
      if (!open) return;
      const m = fig;
      if (m && m.layer === layer && !drag && !pending && (m.applied >= lastSentId || !inputs)) {
        // adopt the server's inputs (presets, first figure) unless the user is moving them
        inputs = m.inputs.map((r) => ({ mean: r.mean, var: r.var }));
      }
      if (m?.error) { status.textContent = `⚠ ${m.error}`; status.dataset.kind = "error"; }
      else if (m) {
        status.dataset.kind = "";
        status.textContent = `iteration ${m.iter} · ${m.samples.toLocaleString("en")} samples per input · computed in ${fmt(m.ms)} ms${m.preset ? ` · preset: ${m.preset}` : ""}`;
      } else status.textContent = "computing…";
      if (!m || m.error || !m.gp || m.layer !== layer || !plot.begin()) return;
      if (!inputs) return;
      legend(el.querySelector(".legend"), [
        { label: "the true response (Monte Carlo)", short: "truth (MC)", color: C.mc, kind: "line" },
        { label: "the Gaussian message, in its input's colour", short: "Gaussian message", color: color(0), kind: "line" },
        { label: "f mean ± 2 sd", short: "f ± 2 sd", color: C.band, kind: "band" },
        { label: "inducing variables u (± 2 sd)", short: "u", color: RED, kind: "tick" },
        { label: "the inputs: drag to move, drag ○ to widen", short: "inputs", color: color(1), kind: "band" },
      ]);
      el.dataset.seq = String(m.seq);
      el.dataset.applied = String(m.applied);
      readout(m);

      const u = layerUnits(s.setup, layer, f.layers.length);
      const ctx = plot.ctx, W = plot.w, H = plot.h;
      const n = m.inputs.length;
      const leftW = Math.max(240, Math.min(W * 0.36, 420));
      const gap = 26;
      const R = { l: leftW + gap + 48, r: W - 12 };
      const gpBox = { l: R.l, r: R.r, t: 14, b: Math.round(H * 0.58) };
      const inBox = { l: R.l, r: R.r, t: gpBox.b + 34, b: H - 40 };

      // x range of the right column: the GP grid (covers Z and inputs ± 3 sd)
      const g = m.gp, G = g.g;
      const x0 = g.x[0], x1 = g.x[G - 1];
      let ylo = Infinity, yhi = -Infinity;
      for (let i = 0; i < G; i++) { ylo = Math.min(ylo, g.mean[i] - 2 * g.sd[i]); yhi = Math.max(yhi, g.mean[i] + 2 * g.sd[i]); }
      const I = m.inducing;
      for (let k = 0; k < I.m; k++) { ylo = Math.min(ylo, I.mean[k] - 2 * I.sd[k]); yhi = Math.max(yhi, I.mean[k] + 2 * I.sd[k]); }
      const ypad = 0.06 * (yhi - ylo || 1);

      // -- top right: the GP and its inducing variables --
      plot.area(x0, x1, ylo - ypad, yhi + ypad, gpBox);
      plot.axes({ ux: u.ux, uy: u.uy });
      plot.clip(() => {
        plot.band(G, (i) => g.x[i], (i) => g.mean[i] - 2 * g.sd[i], (i) => g.mean[i] + 2 * g.sd[i], C.band);
        plot.line(G, (i) => g.x[i], (i) => g.mean[i], C.mean, 2);
        ctx.lineWidth = 2.2; ctx.strokeStyle = RED; ctx.fillStyle = RED;
        for (let k = 0; k < I.m; k++) {
          const px = plot.sx(I.z[k]);
          ctx.beginPath(); ctx.moveTo(px, plot.sy(I.mean[k] - 2 * I.sd[k])); ctx.lineTo(px, plot.sy(I.mean[k] + 2 * I.sd[k])); ctx.stroke();
          ctx.beginPath(); ctx.arc(px, plot.sy(I.mean[k]), 2.2, 0, 2 * Math.PI); ctx.fill();
        }
        // where each input sits under the function: a faint column ± 2 sd
        for (let k = 0; k < inputs.length; k++) {
          const gi = inputs[k], sd = Math.sqrt(gi.var);
          ctx.fillStyle = rgba(color(k), 0.07);
          const a = plot.sx(gi.mean - 2 * sd), b = plot.sx(gi.mean + 2 * sd);
          ctx.fillRect(a, gpBox.t, Math.max(1, b - a), gpBox.b - gpBox.t);
        }
      });
      ctx.fillStyle = C.ink; ctx.font = "600 12px system-ui, sans-serif"; ctx.textAlign = "left"; ctx.textBaseline = "top";
      const narrow = leftW < 330; // a projector at a large type scale: shorter words
      plot.text(narrow ? `Layer ${layer + 1}: f ± 2 sd; u in red` : `Layer ${layer + 1}: f mean ± 2 sd; inducing variables u (red, ± 2 sd)`, gpBox.l + 6, gpBox.t + 2);
      ctx.font = "12px system-ui, sans-serif";
      vlabel(plot, u.ylabel, R.l - 44, (gpBox.t + gpBox.b) / 2);

      // -- bottom right: the input Gaussians --
      let peak = 0;
      for (const gi of inputs) peak = Math.max(peak, 1 / Math.sqrt(2 * Math.PI * gi.var));
      plot.area(x0, x1, 0, peak * 1.1, inBox);
      plot.axes({ ux: u.ux, uy: { to: (v) => v, from: (v) => v }, ygrid: false });
      const sxIn = plot.sx, syIn = plot.sy, ixIn = plot.ix;
      boxes = { inp: inBox, sx: sxIn, ix: ixIn, inY: (k, x) => syIn(gauss(x, inputs[k].mean, inputs[k].var)) };
      plot.clip(() => {
        for (let k = 0; k < inputs.length; k++) {
          const gi = inputs[k], sd = Math.sqrt(gi.var), col = color(k);
          const N = 160, a = Math.max(x0, gi.mean - 4 * sd), b = Math.min(x1, gi.mean + 4 * sd);
          ctx.beginPath();
          ctx.moveTo(sxIn(a), syIn(0));
          for (let i = 0; i <= N; i++) { const x = a + (b - a) * i / N; ctx.lineTo(sxIn(x), syIn(gauss(x, gi.mean, gi.var))); }
          ctx.lineTo(sxIn(b), syIn(0));
          ctx.fillStyle = rgba(col, k === hover || drag?.k === k ? 0.28 : 0.16); ctx.fill();
          ctx.strokeStyle = col; ctx.lineWidth = k === hover || drag?.k === k ? 3 : 2; ctx.stroke();
          const [hx, hy] = handleXY(k);
          ctx.beginPath(); ctx.arc(hx, hy, 4.5, 0, 2 * Math.PI); ctx.fillStyle = "#fff"; ctx.fill(); ctx.lineWidth = 2; ctx.stroke();
        }
      });
      ctx.fillStyle = C.ink; ctx.textAlign = "center"; ctx.textBaseline = "bottom";
      plot.text(narrow || s.follower ? u.xlabel : `${u.xlabel} — inputs: drag to move, drag ○ or wheel to widen`, (inBox.l + inBox.r) / 2, H - 4);
      vlabel(plot, "input density", R.l - 44, (inBox.t + inBox.b) / 2);

      // -- left: the responses --
      const rowH = (H - 14) / n;
      for (let k = 0; k < n; k++) {
        const r = m.inputs[k], col = color(k);
        const box = { l: 44, r: leftW, t: 10 + k * rowH + 4, b: 10 + (k + 1) * rowH - 34 };
        if (box.b - box.t < 12) continue;
        const d = r.density;
        const msd = Math.sqrt(r.message.var);
        let lo = Math.min(d.x[0], r.message.mean - 3.5 * msd), hi = Math.max(d.x[d.g - 1], r.message.mean + 3.5 * msd);
        let pk = 1 / Math.sqrt(2 * Math.PI * r.message.var);
        for (let i = 0; i < d.g; i++) pk = Math.max(pk, d.p[i]);
        plot.area(lo, hi, 0, pk * 1.08, box);
        plot.axes({ ux: u.uy, uy: { to: (v) => v, from: (v) => v }, ygrid: false });
        plot.clip(() => {
          const N = 160;
          ctx.beginPath(); ctx.moveTo(plot.sx(lo), plot.sy(0));
          for (let i = 0; i <= N; i++) { const x = lo + (hi - lo) * i / N; ctx.lineTo(plot.sx(x), plot.sy(gauss(x, r.message.mean, r.message.var))); }
          ctx.lineTo(plot.sx(hi), plot.sy(0));
          ctx.fillStyle = rgba(col, 0.18); ctx.fill();
          ctx.strokeStyle = col; ctx.lineWidth = 2.2; ctx.stroke();
          plot.line(d.g, (i) => d.x[i], (i) => d.p[i], "#111827", 1.6);
        });
        ctx.fillStyle = col; ctx.font = "600 12px system-ui, sans-serif"; ctx.textAlign = "left"; ctx.textBaseline = "top";
        plot.text(`${k + 1}`, box.l + 5, box.t + 2);
        ctx.font = "12px system-ui, sans-serif"; ctx.fillStyle = C.ink; ctx.textBaseline = "bottom"; ctx.textAlign = "center";
        // the caption, centred under its plot, stays between the column's
        // vertical label and the input density's: shorter words, then
        // smaller type where it would run into them
        const room = leftW - 4;
        let cap = penaltyCaption(r, narrow, layer === f.layers.length - 1 ? s.setup.output_unit : "");
        if (ctx.measureText(cap).width > room) cap = penaltyCaption(r, true);
        const wide = ctx.measureText(cap).width;
        if (wide > room) ctx.font = `${Math.max(7, (12 * room) / wide).toFixed(1)}px system-ui, sans-serif`;
        plot.text(cap, (box.l + box.r) / 2, box.b + 32);
      }
      ctx.save(); ctx.fillStyle = C.muted; ctx.textAlign = "center";
      vlabel(plot, `response density over ${u.ylabel}`, 12, H / 2);
      ctx.restore();
      ctx.strokeStyle = C.grid; ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(leftW + gap / 2 + 4, 10); ctx.lineTo(leftW + gap / 2 + 4, H - 10); ctx.stroke();
    },
  };
});

function vlabel(plot, text, x, y) {
  const ctx = plot.ctx;
  ctx.save();
  ctx.translate(x, y);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = "center"; ctx.textBaseline = "middle";
  plot.text(text, 0, 0);
  ctx.restore();
}
