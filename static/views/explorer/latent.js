// One hidden layer's view: its message means at the training scans (and,
// with a test split, the held-out scans placed from their input alone) as
// pairwise projections (latent2d.js) or one 3-D view to turn (latent3d.js).
// It owns its canvas, its 3-D view's angle, its axes' ranges and the drag
// of an inducing input (the "move" op); it shares only the colour scale and
// the selection, which it is given, and hover, which it sets through the link.
import { Plot, StickyRange, canvasPoint } from "../../plot.js";
import { StaticLayer } from "../layer.js";
import { el, setText, viewBox } from "../dom.js";
import { drawPairs } from "./latent2d.js";
import { draw3d, VIEW3D } from "./latent3d.js";
import { createPoints } from "./points.js";

// createLatent makes hidden layer li's view; env: {send, redraw, link}.
export function createLatent(li, { send, redraw, link, scale }) {
  const btn3d = el("button", { type: "button", "data-testid": `explorer-latent-${li}-3d`, "aria-pressed": "false", title: "Show this layer as one 3-D view you can turn: drag to rotate, wheel to zoom" }, "3-D view");
  const btnReset = el("button", { type: "button", "data-testid": `explorer-latent-${li}-reset`, title: "Back to the starting angle and zoom", hidden: "" }, "reset view");
  const box = viewBox(`latent-${li}`, `Hidden layer ${li + 1}`, `latent l${li}`, [el("span", { class: "rv-tools" }, btn3d, btnReset)]);
  const cv = box.cv;
  const v = {
    plot: new Plot(cv, { l: 56, r: 12, t: 18, b: 30 }), bufs: [],
    layer: new StaticLayer(`explorer-latent-${li}`), held: new StaticLayer(`explorer-latent-${li} held-out`, { opaque: false }),
    points: createPoints(cv), // every row of large data, over the canvas (points.js)
  };
  const o = { on: false, ...VIEW3D }; // the 3-D view
  let drawn = null; // the last draw's {hit, screen}
  // A turn or a zoom of the 3-D view changes this view alone: it is drawn
  // again on its own at the next animation frame, with what the page last
  // gave it, not the whole page (every row's points of the other layer,
  // the output view, the readouts).
  let last = null, queued = false;
  const turned = () => {
    if (!last) { redraw(); return; }
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      const t = performance.now();
      drawView(last);
      performance.measure("explorer-latent", { start: t, end: performance.now() });
    });
  };
  let drag = null, lastSend = 0, ranges = null;
  scale?.wire(cv, li, () => (o.on ? null : drawn?.hit.proj), redraw); // Shift-drag brushes every row

  function set3d(on) {
    o.on = on;
    box.root.classList.toggle("three", on);
    btn3d.setAttribute("aria-pressed", String(on));
    btnReset.hidden = !on;
    // focusable while in 3-D: arrow keys turn it, + and − zoom, 0 resets
    if (on) cv.setAttribute("tabindex", "0"); else cv.removeAttribute("tabindex");
    redraw();
  }
  btn3d.addEventListener("click", () => set3d(!o.on));
  btnReset.addEventListener("click", () => { Object.assign(o, VIEW3D); turned(); });

  // ---- pointer: turn the 3-D view, drag an inducing input, hover a scan ----
  const sendMove = (d) => {
    lastSend = performance.now();
    send({ op: "move", layer: d.layer, index: d.handle, z: d.z.map((x) => Math.max(-1000, Math.min(1000, x))) });
  };
  cv.addEventListener("pointerdown", (e) => {
    const [px, py] = canvasPoint(cv, e);
    if (o.on) drag = { rotate: true, x: px, y: py, yaw: o.yaw, pitch: o.pitch };
    else drag = drawn?.hit.handle(px, py) ?? null;
    if (drag) { cv.setPointerCapture(e.pointerId); e.preventDefault(); }
  });
  cv.addEventListener("pointermove", (e) => {
    const [px, py] = canvasPoint(cv, e);
    if (drag?.rotate) {
      o.yaw = drag.yaw + (px - drag.x) * 0.01;
      o.pitch = Math.max(-1.55, Math.min(1.55, drag.pitch + (py - drag.y) * 0.01));
      turned();
    } else if (drag) {
      const p = drawn.hit.proj[drag.proj];
      drag.z[p.a] = p.s.ix(px); drag.z[p.b] = p.s.iy(py);
      if (performance.now() - lastSend > 60) sendMove(drag);
      redraw();
    } else {
      const h = drawn?.hit.point(px, py) ?? -1;
      if (h !== link.sel.hover) link.hoverAt(h);
    }
  });
  const end = () => {
    const moved = drag && !drag.rotate;
    if (moved) sendMove(drag);
    drag = null;
    if (moved) redraw(); else turned();
  };
  cv.addEventListener("pointerup", end);
  cv.addEventListener("pointercancel", end);
  cv.addEventListener("pointerleave", () => { if (!drag && link.sel.hover >= 0) link.hoverAt(-1); });
  cv.addEventListener("keydown", (e) => {
    if (!o.on) return;
    const turn = { ArrowLeft: [-0.1, 0], ArrowRight: [0.1, 0], ArrowUp: [0, -0.1], ArrowDown: [0, 0.1] }[e.key];
    if (turn) { o.yaw += turn[0]; o.pitch = Math.max(-1.55, Math.min(1.55, o.pitch + turn[1])); }
    else if (e.key === "+" || e.key === "=") o.zoom = Math.min(10, o.zoom * 1.2);
    else if (e.key === "-") o.zoom = Math.max(0.3, o.zoom / 1.2);
    else if (e.key === "0") Object.assign(o, VIEW3D);
    else return;
    e.preventDefault(); e.stopPropagation(); // not the page's shortcuts
    turned();
  });
  cv.addEventListener("wheel", (e) => {
    if (!o.on) return;
    e.preventDefault();
    o.zoom = Math.max(0.3, Math.min(10, o.zoom * Math.exp(-e.deltaY * 0.0015)));
    turned();
  }, { passive: false });

  // latentRanges returns each dimension's range over the training and
  // held-out scans, which every view of the layer shares. While the
  // optimizer runs they grow at once and shrink slowly (StickyRange), so
  // the axes do not jitter from frame to frame. They are shown snapped
  // outward to a grid (snapRange) and kept until the data leave them or
  // they are a third too wide, so that the axes, the static layer, change
  // now and then, not with every frame. A frame that shows a command's
  // effect (a restart, an undo) or new data sets them afresh. A collapsed
  // dimension (col[a]) spans its centre ± 2 of its rows' sd instead, as
  // the server's figure does: its means' own range is round-off.
  function latentRanges(f, D, nn, M, dataKey, L, n, col) {
    const key = `${dataKey}|${D}|${nn}`;
    if (!ranges || ranges.key !== key || ranges.applied !== f.applied) {
      ranges = { key, applied: f.applied, frame: null, dims: Array.from({ length: D }, () => new StickyRange()), shown: [] };
    }
    if (ranges.frame !== f) { // once per frame, not per redraw
      ranges.frame = f;
      for (let a = 0; a < D; a++) {
        let lo = Infinity, hi = -Infinity;
        if (col?.[a] && n > 0) {
          let c = 0, v = 0;
          for (let i = 0; i < n; i++) { c += M(i, a); v += Math.max(0, L.var[i * D + a]); }
          const sd = Math.sqrt(v / n) || 1;
          lo = c / n - 2 * sd; hi = c / n + 2 * sd;
        } else {
          for (let i = 0; i < nn; i++) { const x = M(i, a); if (x < lo) lo = x; if (x > hi) hi = x; }
        }
        ranges.dims[a].update(lo, hi);
        const c = snapRange(ranges.dims[a]), s = ranges.shown[a];
        if (!s || c.lo < s.lo || c.hi > s.hi || 4 * (c.hi - c.lo) < 3 * (s.hi - s.lo)) ranges.shown[a] = c;
      }
    }
    return ranges.shown;
  }

  return {
    root: box.root, cv,
    // view3d turns the 3-D view on or off (on undefined: as it is) and
    // returns its angle; turn3d sets it.
    view3d(on) { if (on !== undefined) set3d(on); return { ...o }; },
    turn3d(yaw, pitch, zoom) { Object.assign(o, { yaw, pitch, zoom }); turned(); },
    // screen is scan i's place in CSS pixels of the canvas as last drawn
    // (the first projection, or the 3-D view).
    screen: (i) => drawn?.screen(i) ?? null,
    // draw: m = {frame, data, colour, sel, testHidden (the held-out scans'
    // messages, or null: not shown), testKey (changes with them), revisits
    // (show them), dataKey}.
    draw(m) { last = m; drawView(m); },
  };

  // drawView draws the view as m says (see draw).
  function drawView(m) {
    const f = m.frame, L = f.layers[li], nh = f.layers.length - 1;
    box.root.hidden = li >= nh || !L?.mean;
    btn3d.hidden = box.root.hidden || L.d < 3;
    if (o.on && L && L.d < 3) set3d(false); // a new architecture without a 3-D layer
    if (box.root.hidden || !v.plot.begin(false)) { v.points.clear(); return; } // the static layer replaces every pixel
    const n = m.data.n, D = L.d, T = m.testHidden?.[li];
    const nT = T && T.d === D ? T.n : 0;
    const M = (i, a) => (i < n ? L.mean[i * D + a] : T.mean[(i - n) * D + a]);
    const col = m.collapsed?.[li] ?? null;
    const a = {
      li, L, next: f.layers[li + 1], n, nT, M, rng: latentRanges(f, D, n + nT, M, m.dataKey, L, n, col), collapsed: col,
      colour: m.colour, sel: m.sel, truth: m.revisits ? m.data.truth : null, drag: drag && !drag.rotate ? drag : null, testKey: m.testKey,
      dens: scale?.density(li), all: scale?.points && { ...scale.points.layers[li], n: scale.points.rows, v: scale.points.v }, rect: scale?.rect?.li === li ? scale.rect : null,
    };
    const three = D >= 3 && o.on;
    drawn = three ? draw3d(v, a, o) : drawPairs(v, a);
    cv.dataset.highlighted = String(drawn.count);
    cv.dataset.colourbar = m.colour.title;
    const sc = m.scores?.[li];
    setText(box.title, `Hidden layer ${li + 1} (h${li + 1}): message means${three ? " in 3-D (drag or arrow keys to turn, wheel or +/− to zoom)" : ", halos ±2 sd"}` +
      `${nT ? `, ○ held-out ${m.data.row.many} (predicted from ${m.data.input.word} alone)` : ""}, ◆ layer ${li + 2}'s inducing inputs${three ? "" : " (drag)"}` +
      (sc != null ? ` · geometry score ${sc.toFixed(3)}` : "") + collapsedNote(col));
  }
}

// collapsedNote says which dimensions have collapsed: their means spread
// less than a tenth of the rows' own sd (latent.CollapseRatio), so what
// they show is noise, not structure.
function collapsedNote(col) {
  const ks = (col ?? []).flatMap((c, k) => (c ? [k + 1] : []));
  if (!ks.length) return "";
  return ` · dimension${ks.length > 1 ? "s" : ""} ${ks.join(", ")} collapsed: ${ks.length > 1 ? "their" : "its"} means spread less than a tenth of their own sd, so ${ks.length > 1 ? "they carry" : "it carries"} no information`;
}

// snapRange widens a range outward to multiples of a step of about a
// sixteenth of its span (1, 2 or 5 × 10^k).
function snapRange({ lo, hi }) {
  const raw = (hi - lo) / 16;
  if (!(raw > 0) || !isFinite(raw)) return { lo, hi };
  const p = 10 ** Math.floor(Math.log10(raw)), m = raw / p;
  const step = (m < 2 ? 1 : m < 5 ? 2 : 5) * p;
  return { lo: Math.floor(lo / step) * step, hi: Math.ceil(hi / step) * step };
}
