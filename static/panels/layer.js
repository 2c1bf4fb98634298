// Layer panel for a layer with 1-D input and 1-D output: the layer's
// function (mean, ±2 sd of f, ±2 sd with noise), inducing points as
// draggable handles, incoming messages as Gaussians, outgoing messages,
// and per-datum penalties in a strip under the axis.
import { register, layerUnits } from "./registry.js";
import { Plot, C, StickyRange, colormap, legend, fmt, canvasPoint, clientPoint } from "../plot.js";

const STRIP = 30; // px of the penalty strip
const HIT = 10;   // px radius for grabbing a handle

// layerTitle writes a layer panel's title: what the layer maps, which
// always shows, and its details, which presentation mode cuts short when
// the panel is narrow (style.css).
export function layerTitle(h2, main, detail) {
  const key = main + "|" + detail;
  if (h2.dataset.key === key) return;
  h2.dataset.key = key;
  const a = document.createElement("span"), b = document.createElement("span");
  a.className = "t-main"; a.textContent = main;
  b.className = "t-detail"; b.textContent = detail.startsWith("of ") ? ` ${detail}` : ` · ${detail}`;
  h2.replaceChildren(a, b);
  h2.title = `${main} · ${detail}`;
}

register("layer1d", (el, app) => {
  const li = Number(el.dataset.layer);
  const canvas = el.querySelector("canvas");
  const plot = new Plot(canvas, { l: 56, r: 14, t: 10, b: 40 + STRIP + 6 });
  const overlay = el.querySelector(".overlay");
  overlay.dataset.testid = `layer-${li}-overlay`;
  const xr = new StickyRange(), yr = new StickyRange();
  let penMax = 0;
  // drag: {index, mode: "pending"|"move"|"pull"|"keep", z, mu, z0, mu0,
  // offX, offY (grab offset in data units), px0, py0}
  let drag = null;
  let pendingMove = null, moveScheduled = false;
  let hover = -1;

  let drawn = null; // the layer as last drawn: hit tests use what the user sees
  const layer = () => drawn;

  function handleAt(px, py) {
    const L = layer();
    if (!L || !plot.sx) return -1;
    let best = -1, bd = HIT * HIT;
    for (let k = 0; k < L.m; k++) {
      const dx = plot.sx(L.z[k]) - px, dy = plot.sy(L.u_mean[k]) - py;
      const d = dx * dx + dy * dy;
      if (d <= bd) { bd = d; best = k; }
    }
    return best;
  }

  function pos(ev) {
    return canvasPoint(canvas, ev);
  }

  function flushMove() {
    moveScheduled = false;
    if (!pendingMove) return;
    app.send(pendingMove);
    pendingMove = null;
  }

  canvas.addEventListener("pointerdown", (ev) => {
    const [px, py] = pos(ev);
    const k = handleAt(px, py);
    if (k < 0) return;
    ev.preventDefault();
    if (ev.altKey || ev.shiftKey) {
      app.send({ op: "remove", layer: li, index: k });
      return;
    }
    const L = layer();
    drag = {
      index: k, mode: ev.ctrlKey || ev.metaKey ? "keep" : "pending",
      z: L.z[k], mu: L.u_mean[k], z0: L.z[k], mu0: L.u_mean[k],
      // The grab offset: the handle keeps its place under the pointer.
      offX: L.z[k] - plot.ix(px), offY: L.u_mean[k] - plot.iy(py),
      px0: px, py0: py,
    };
    // The optimizer holds still while the drag lasts (its moves are one
    // edit) and carries on by itself when it ends, unless paused.
    app.send({ op: "hold" });
    canvas.setPointerCapture(ev.pointerId);
    canvas.style.cursor = "grabbing";
  });
  canvas.addEventListener("pointermove", (ev) => {
    const [px, py] = pos(ev);
    if (!drag) {
      const k = handleAt(px, py);
      if (k !== hover) {
        hover = k;
        canvas.style.cursor = k >= 0 ? "grab" : "crosshair";
        canvas.title = k >= 0 ? "Drag sideways: move the inducing input, keeping the function. Drag up or down: pull the function. Ctrl-drag: move z keeping q(u) (the naïve edit). Alt- or Shift-click: remove." : "Double-click: add an inducing point here, at the layer's posterior";
        app.redraw();
      }
      return;
    }
    // The first 4 px decide what the drag does: sideways moves the input,
    // up or down pulls the function; it keeps that meaning to the end.
    if (drag.mode === "pending") {
      const dx = px - drag.px0, dy = py - drag.py0;
      if (dx * dx + dy * dy < 16) return;
      drag.mode = Math.abs(dx) >= Math.abs(dy) ? "move" : "pull";
    }
    if (drag.mode === "pull") {
      drag.mu = plot.iy(py) + drag.offY;
      pendingMove = { op: "move", layer: li, index: drag.index, mu: [drag.mu] };
    } else {
      drag.z = plot.ix(px) + drag.offX;
      pendingMove = { op: "move", layer: li, index: drag.index, z: [drag.z], ...(drag.mode === "keep" ? { keep_u: true } : {}) };
    }
    if (!moveScheduled) { moveScheduled = true; requestAnimationFrame(flushMove); }
    app.redraw();
  });
  const endDrag = () => {
    if (!drag) return;
    flushMove();
    drag = null;
    canvas.style.cursor = "grab";
    app.send({ op: "release" });
  };
  canvas.addEventListener("pointerup", endDrag);
  canvas.addEventListener("pointercancel", endDrag);
  canvas.addEventListener("dblclick", (ev) => {
    const [px, py] = pos(ev);
    if (handleAt(px, py) >= 0 || !plot.ix) return;
    // No output: the new point takes the layer's posterior there, so the
    // function and the bound stay as they are.
    app.send({ op: "add", layer: li, z: [plot.ix(px)] });
  });

  return {
    dragging: () => !!drag,
    // handleClient returns inducing point k's position in client pixels (for tests and tours).
    handleClient(k) {
      const L = layer();
      if (!L || !plot.sx || k >= L.m) return null;
      return clientPoint(canvas, plot.sx(L.z[k]), plot.sy(L.u_mean[k]));
    },
    draw(s) {
      const { setup, frame } = s;
      const L = frame?.layers?.[li];
      if (!L || !plot.begin()) return;
      drawn = L;
      const nL = frame.layers.length, N = frame.n;
      const u = layerUnits(setup, li, nL);
      // Incoming messages: the data for layer 0, else the previous layer's output.
      const prev = li > 0 ? frame.layers[li - 1] : null;
      const inMean = (n) => (li === 0 ? setup.x[n] : prev.mean ? prev.mean[n] : NaN);
      const inSd = (n) => (li === 0 || !prev.var ? 0 : Math.sqrt(Math.max(0, prev.var[n])));
      const g = L.grid;
      const G = g ? g.g : 0;
      const sdF = (i) => Math.sqrt(Math.max(0, g.var_u[i] + g.var_cond[i]));
      const sdY = (i) => Math.sqrt(Math.max(0, g.var_u[i] + g.var_cond[i] + L.noise));
      // ranges
      let x0 = G ? g.x[0] : -1, x1 = G ? g.x[G - 1] : 1;
      let lo = Infinity, hi = -Infinity;
      for (let i = 0; i < G; i++) { lo = Math.min(lo, g.mean[i] - 2 * sdY(i)); hi = Math.max(hi, g.mean[i] + 2 * sdY(i)); }
      for (let k = 0; k < L.m; k++) {
        const w = 2 * Math.sqrt(Math.max(0, L.u_var[k]));
        lo = Math.min(lo, L.u_mean[k] - w); hi = Math.max(hi, L.u_mean[k] + w);
      }
      const last = li === nL - 1;
      if (last && setup) for (let n = 0; n < N; n++) { lo = Math.min(lo, setup.y[n]); hi = Math.max(hi, setup.y[n]); }
      const pad = 0.08 * (hi - lo || 1);
      // leave room at the bottom for the incoming messages
      const room = 0.22 * (hi - lo + 2 * pad);
      xr.update(x0, x1, !!drag);
      yr.update(lo - pad - room, hi + pad, !!drag);
      const H = plot.h, W = plot.w;
      const main = { l: 56, r: W - 14, t: 10, b: H - 40 - STRIP - 6 };
      const strip = { l: 56, r: W - 14, t: main.b + 6, b: H - 40 };
      plot.area(xr.lo, xr.hi, yr.lo, yr.hi, main);
      plot.axes({ xlabel: u.xlabel, ylabel: u.ylabel, ux: u.ux, uy: u.uy, bottom: strip.b });
      const ctx = plot.ctx;
      plot.clip(() => {
        // incoming messages along the input axis
        const baseY = main.b - 1, peak = (main.b - main.t) * 0.18;
        for (let n = 0; n < N; n++) {
          const m = inMean(n), sd = inSd(n);
          const col = colormap(N > 1 ? n / (N - 1) : 0.5, 0.55);
          ctx.strokeStyle = col; ctx.lineWidth = 1.2;
          ctx.beginPath();
          if (sd <= 0 || plot.sx(m + sd) - plot.sx(m) < 1.5) {
            ctx.moveTo(plot.sx(m), baseY); ctx.lineTo(plot.sx(m), baseY - peak * 0.6);
          } else {
            for (let t = -3; t <= 3.001; t += 0.25) ctx.lineTo(plot.sx(m + t * sd), baseY - peak * Math.exp(-0.5 * t * t));
          }
          ctx.stroke();
        }
        if (G) {
          plot.band(G, (i) => g.x[i], (i) => g.mean[i] - 2 * sdY(i), (i) => g.mean[i] + 2 * sdY(i), C.band2);
          plot.band(G, (i) => g.x[i], (i) => g.mean[i] - 2 * sdF(i), (i) => g.mean[i] + 2 * sdF(i), C.band);
          plot.line(G, (i) => g.x[i], (i) => g.mean[i], C.mean, 2.2);
        }
        // outgoing messages
        if (L.mean) {
          for (let n = 0; n < N; n++) {
            const x = inMean(n), m = L.mean[n], sd = Math.sqrt(Math.max(0, L.var[n]));
            const col = colormap(N > 1 ? n / (N - 1) : 0.5, 0.9);
            ctx.strokeStyle = colormap(N > 1 ? n / (N - 1) : 0.5, 0.35); ctx.lineWidth = 1.5;
            ctx.beginPath(); ctx.moveTo(plot.sx(x), plot.sy(m - 2 * sd)); ctx.lineTo(plot.sx(x), plot.sy(m + 2 * sd)); ctx.stroke();
            ctx.fillStyle = col;
            ctx.beginPath(); ctx.arc(plot.sx(x), plot.sy(m), 2.4, 0, 2 * Math.PI); ctx.fill();
          }
        }
        if (last && setup) {
          ctx.strokeStyle = C.data; ctx.lineWidth = 1.2;
          for (let n = 0; n < N; n++) {
            ctx.beginPath(); ctx.arc(plot.sx(inMean(n)), plot.sy(setup.y[n]), 3.2, 0, 2 * Math.PI); ctx.stroke();
          }
        }
        // inducing points
        for (let k = 0; k < L.m; k++) {
          let z = L.z[k], mu = L.u_mean[k];
          // While dragging, the handle follows the pointer along the drag's
          // axis; the other coordinate is the server's answer.
          if (drag && drag.index === k) {
            if (drag.mode === "pull") mu = drag.mu;
            else if (drag.mode !== "pending") z = drag.z;
            if (drag.mode === "keep") mu = drag.mu0;
          }
          const w = 2 * Math.sqrt(Math.max(0, L.u_var[k]));
          const px = plot.sx(z), py = plot.sy(mu);
          ctx.strokeStyle = C.handle; ctx.lineWidth = 1.5;
          ctx.beginPath(); ctx.moveTo(px, plot.sy(mu - w)); ctx.lineTo(px, plot.sy(mu + w)); ctx.stroke();
          const r = k === hover || (drag && drag.index === k) ? 7.5 : 6;
          ctx.beginPath(); ctx.moveTo(px, py - r); ctx.lineTo(px + r, py); ctx.lineTo(px, py + r); ctx.lineTo(px - r, py); ctx.closePath();
          ctx.fillStyle = k === hover || (drag && drag.index === k) ? C.handleHot : C.handle;
          ctx.fill();
          ctx.strokeStyle = "#fff"; ctx.lineWidth = 1.2; ctx.stroke();
        }
      });
      // penalty strip
      if (L.comp) {
        // One scale for every layer's strip (the largest bar of any
        // layer), so that 0.03 nats do not look as tall as 0.7.
        let mx = 0, all = 0;
        for (let n = 0; n < N; n++) mx = Math.max(mx, L.comp[n] + L.prop[n]);
        for (const O of s.frame.layers) {
          if (!O.comp) continue;
          for (let n = 0; n < O.comp.length; n++) all = Math.max(all, O.comp[n] + O.prop[n]);
        }
        penMax = all > penMax ? all : penMax * 0.97 + all * 0.03;
        // The bars stay below the "max … nats" line: penMax never falls
        // below this frame's largest bar.
        ctx.textBaseline = "top";
        const head = ctx.measureText("max").actualBoundingBoxDescent + 3;
        const k = penMax > 0 ? (strip.b - strip.t - head) / penMax : 0;
        ctx.fillStyle = "#f6f7f9";
        ctx.fillRect(strip.l, strip.t, strip.r - strip.l, strip.b - strip.t);
        plot.mark(strip.l, strip.b - penMax * k, strip.r, strip.b); // where the bars can reach
        const bw = Math.max(2, Math.min(8, (strip.r - strip.l) / (N * 1.6)));
        for (let n = 0; n < N; n++) {
          const px = plot.sx(inMean(n));
          if (px < strip.l || px > strip.r) continue;
          const hc = L.comp[n] * k, hp = L.prop[n] * k;
          ctx.fillStyle = C.comp; ctx.fillRect(px - bw / 2, strip.b - hc, bw, hc);
          ctx.fillStyle = C.prop; ctx.fillRect(px - bw / 2, strip.b - hc - hp, bw, hp);
        }
        ctx.fillStyle = C.muted; ctx.textAlign = "right"; ctx.textBaseline = "middle";
        plot.text("penalty", strip.l - 6, (strip.t + strip.b) / 2);
        ctx.textAlign = "right"; ctx.textBaseline = "top";
        // this layer's largest bar, of the strips' common top
        const say = nL > 1 ? `max ${fmt(mx)} of ${fmt(penMax)} nats` : `max ${fmt(mx)} nats`;
        const room = strip.r - strip.l - 4, wide = ctx.measureText(say).width;
        if (wide > room) { ctx.save(); ctx.font = ctx.font.replace(/[\d.]+px/, (m) => `${(parseFloat(m) * room / wide).toFixed(1)}px`); }
        plot.text(say, strip.r - 2, strip.t + 1);
        if (wide > room) ctx.restore();
      }
      layerTitle(el.querySelector(".layer-title"), `Layer ${li + 1}: ${li === 0 ? "input" : `h${li}`} → ${last ? "output" : `h${li + 1}`}`,
        `of ${nL} · ${L.m} inducing · ℓ = ${fmt(L.kernel.params[1] ?? NaN)}, σ²f = ${fmt(L.kernel.params[0])}, s² = ${fmt(L.noise)}`);
      const follower = !!s.follower;
      legend(el.querySelector(".legend"), [
        { label: "f mean", short: "f", color: C.mean, kind: "line" },
        { label: "± 2 sd of f", short: "±2 sd", color: C.band, kind: "band" },
        { label: "± 2 sd with noise s²", short: "+ noise", color: "rgba(37,99,235,0.14)", kind: "band" },
        { label: follower ? "inducing points u" : "inducing points u: drag ↔ to move, ↕ to pull", short: "u", color: C.handle, kind: "diamond" },
        { label: "incoming messages", short: "in", color: colormap(0.4), kind: "line" },
        { label: "outgoing messages ± 2 sd", short: "out", color: colormap(0.7), kind: "dot" },
        ...(last ? [{ label: "data", color: C.data, kind: "ring" }] : []),
        { label: "compression", short: "compr.", color: C.comp, kind: "band" },
        { label: "propagation", short: "propag.", color: C.prop, kind: "band" },
        ...(nL > 1 ? [{ label: "penalty strips: one scale for every layer, its top the largest bar of any layer", short: "one scale", color: C.muted, kind: "none" }] : []),
      ]);
      overlay.textContent = frame.eval_error ? `⚠ ${frame.eval_error}` : "";
    },
  };
});
