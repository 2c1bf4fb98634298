// Robot WiFi latent-space explorer (issues 6 and 14). Shown when the setup
// carries a "robot" section: the hidden layers' message means as three
// pairwise projections or a rotatable 3-D view, coloured by time, true x,
// true y or an access point's signal (one colour scale for every view;
// halos: ±2 sd), the true path, one access point's signal with the model's
// fit, the penalties per scan and the preset's restarts. Views are linked:
// hovering a scan or brushing a time range (drag along the time axis of the
// signals or penalties view, or along the path's time colour bar)
// highlights the same scans everywhere.
//
// Drawing: the app draws at most once per animation frame; every view
// skips its drawing when nothing it shows changed (only the latent views
// change with every frame). Each view keeps a static layer (axes, labels,
// colour bars; for the path, signals and penalties all that changes only
// with the analysis) as pixels, and draws over a copy of them in script
// (splat.js): the latent views' thousands of dots, rings, halos and lines
// a frame, the other views' highlights. One image copy then replaces the
// canvas's pixels: as canvas paths, every arc cost a few µs to rasterise
// where the canvas is not on a GPU, and blending layers and replaying the
// recorded drawing cost as much again; a frame outgrew a 60 Hz frame.
import { register } from "./registry.js";
import { Plot, StickyRange, fmt, canvasPoint, canvasSize, getDrawScale } from "../plot.js";
import { palette, paletteRGB, colorBar } from "../colormap.js";
import { Splat } from "../splat.js";

const CB = 30; // px under a latent view's plots for its colour bar
// Colour bins for batched drawing: every view colours a scan by the same
// value on one scale (colour()), so a colour means the same in the latent
// views, on the path and on the colour bars.
const NB = 24;
const LAYER_COL = ["#0284c7", "#7c3aed", "#d97706", "#059669", "#db2777", "#4b5563"];
const GREY = "rgba(160,170,180,0.35)", GREY_RGB = [160, 170, 180], RING_RGB = [17, 17, 17];
const REVISIT_RGB = [220, 38, 38], TRAIL_RGB = [60, 60, 60], BOX_RGB = [203, 210, 217], WHITE_RGB = [255, 255, 255];
const AXIS_RGB = [[185, 28, 28], [4, 120, 87], [29, 78, 216]]; // the 3-D view's triad: h[0], h[1], h[2]
const DATA_RGB = [17, 24, 39], FILLIN_RGB = [148, 163, 184], GOLD_RGB = [202, 138, 4]; // the signals: data, fill-ins, highlight
const BRUSH_RGB = [234, 179, 8], TICK_RGB = [17, 24, 39]; // a brushed time range (alpha 0.16), the penalties' ticks (0.55)
const HANDLE_RGB = [234, 88, 12], HANDLE_HOT_RGB = [194, 65, 12]; // the inducing inputs' diamonds (alpha 0.85; dragged: 1)
const VIEW3D = { yaw: -0.65, pitch: 0.5, zoom: 1 }; // the 3-D view's reset

// setText changes an element's text only when it differs (no layout otherwise).
function setText(e, t) { if (e.textContent !== t) e.textContent = t; }

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  e.append(...kids);
  return e;
}

// layer paints a view's static layer into its offscreen canvas when key
// (or the canvas size) changed, and returns it ({key, cv, img}: img its
// pixels, read back on first use by pixels()); layerPaints counts the
// paints by view (the browser test logs them). paint draws with plot as
// usual: its context is the offscreen one meanwhile. The layer is opaque,
// in the page's card colour, so that marks blend on it without a
// division (splat.js).
const layerPaints = {};
function layer(v, plot, key, paint) {
  const W = v.cv.width, H = v.cv.height;
  let c = v.cache;
  if (!c || c.key !== key || c.cv.width !== W || c.cv.height !== H) {
    const id = v.root.dataset.testid;
    layerPaints[id] = (layerPaints[id] ?? 0) + 1;
    const off = c?.cv ?? document.createElement("canvas");
    const octx = off.getContext("2d", { willReadFrequently: true }), main = plot.ctx; // kept in memory: read back
    if (off.width !== W || off.height !== H) { off.width = W; off.height = H; }
    octx.setTransform(W / plot.w, 0, 0, H / plot.h, 0, 0);
    octx.fillStyle = getComputedStyle(v.cv).getPropertyValue("--card").trim() || "#fff";
    octx.fillRect(0, 0, plot.w, plot.h);
    octx.font = main.font;
    plot.ctx = octx;
    try { paint(octx); } finally { plot.ctx = main; }
    v.cache = c = { key, cv: off, img: null };
  }
  return c;
}
// pixels reads a static layer's pixels back, once: 1 to 6 ms for a view's
// canvas (the more for the wider views), so not for a view that has no
// marks to draw over it.
function pixels(c) {
  return (c.img ??= c.cv.getContext("2d", { willReadFrequently: true }).getImageData(0, 0, c.cv.width, c.cv.height));
}

// overlay draws a view: its static layer (layer()) and over it marks(sp),
// rasterised in script (sp, a Splat, maps the plot's units as plot.ctx
// does), put on the canvas in one image copy of the pixels that changed:
// nothing for the canvas to blend or replay. The view's plot.begin must
// not clear the canvas (what the last marks left is put over). Without
// marks (null: nothing to draw over the static layer, as in the path,
// signals and penalties views when nothing is highlighted) the layer is
// copied as it is, and its pixels are not read back.
function overlay(v, plot, key, paint, marks) {
  const c = layer(v, plot, key, paint), sp = (v.splat ??= new Splat());
  if (!marks) {
    const ctx = plot.ctx;
    ctx.save(); ctx.setTransform(1, 0, 0, 1, 0, 0); ctx.drawImage(c.cv, 0, 0); ctx.restore();
    sp.forget();
    return;
  }
  sp.begin(plot.ctx, pixels(c));
  marks(sp);
  sp.end();
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

// sizeKey says when a canvas must be drawn again for its size alone.
const sizeKey = (cv) => { const r = canvasSize(cv); return `${r.width}x${r.height}@${window.devicePixelRatio || 1}x${getDrawScale()}`; };

register("robot", (root, app) => {
  const body = root.querySelector(".robot-body");
  const st = {
    sel: { lo: -1, hi: -1 }, hover: -1, ap: -1, dataId: -1,
    out: null, outVar: null, test: null, testVar: null, // cached output-layer arrays (sent once per analysis)
    analysis: 0, // counts analyses received (frames with new_output)
    drag: null, lastSend: 0, stats: { draws: 0, frames: 0, missed: 0, lastSeq: -1 },
    testH: null, showTest: true, // hidden layers' messages at the held-out scans
    showRevisits: true, // links between the revisit pairs
    colour: "time", // colour by: time, x, y or ap:J
    rng: [], // per hidden layer, its dimensions' ranges (latentRanges)
    v3: [{ on: false, ...VIEW3D }, { on: false, ...VIEW3D }], // per hidden layer
  };
  const showRev = root.querySelector('[data-testid="robot-show-revisits"]');
  showRev?.addEventListener("change", () => { st.showRevisits = showRev.checked; app.redraw(); });
  const showTest = root.querySelector('[data-testid="robot-show-test"]');
  showTest?.addEventListener("change", () => { st.showTest = showTest.checked; app.redraw(); });
  const colourSel = root.querySelector('[data-testid="robot-colour"]');
  colourSel?.addEventListener("change", () => { st.colour = colourSel.value; app.redraw(); });
  const restartBody = root.querySelector('[data-testid="robot-restarts"] tbody');
  const views = {};
  let built = false;

  function build(setup) {
    body.replaceChildren();
    const mk = (key, title, cls, extra = []) => {
      const cv = el("canvas", { "data-testid": `robot-${key}-canvas`, role: "img", "aria-label": title });
      const v = el("div", { class: `rv ${cls}`, "data-testid": `robot-${key}` }, el("div", { class: "rv-head" }, el("h3", { text: title }), ...extra), el("div", { class: "rv-plot" }, cv));
      body.append(v);
      views[key] = { root: v, cv, title: v.querySelector("h3"), plot: new Plot(cv, { l: 56, r: 12, t: 18, b: 30 }), drawn: "" };
      return views[key];
    };
    for (let li = 0; li < 2; li++) {
      const t3 = el("button", { type: "button", "data-testid": `robot-latent-${li}-3d`, "aria-pressed": "false", title: "Show this layer as one 3-D view you can turn: drag to rotate, wheel to zoom" }, "3-D view");
      const rs = el("button", { type: "button", "data-testid": `robot-latent-${li}-reset`, title: "Back to the starting angle and zoom", hidden: "" }, "reset view");
      t3.addEventListener("click", () => set3d(li, !st.v3[li].on));
      rs.addEventListener("click", () => { Object.assign(st.v3[li], VIEW3D); app.redraw(); });
      const v = mk(`latent-${li}`, `Hidden layer ${li + 1}`, `latent l${li}`, [el("span", { class: "rv-tools" }, t3, rs)]);
      v.btn3d = t3; v.btnReset = rs;
      if (li === 0) mk("path", "True path (x, y in metres; never used for fitting)", "path");
    }
    const sel = el("select", { "data-testid": "robot-ap", title: "access point" });
    setup.output_names.forEach((nm, j) => sel.add(new Option(`AP ${j + 1} · ${nm}`, String(j))));
    sel.addEventListener("change", () => { st.ap = Number(sel.value); app.redraw(); });
    mk("signals", "Signal strength of one access point over time", "signals", [el("label", { class: "ap" }, "Access point ", sel)]);
    views.signals.select = sel;
    mk("penalties", "Penalties per scan (nats): where the compression and propagation terms concentrate", "penalties");
    for (const [key, v] of Object.entries(views)) wire(key, v);
    if (colourSel) { // time, x, y (in the page), then every access point
      while (colourSel.options.length > 3) colourSel.remove(3);
      setup.output_names.forEach((nm, j) => colourSel.add(new Option(`signal of AP ${j + 1} · ${nm}`, `ap:${j}`)));
      colourSel.value = st.colour = "time";
    }
    built = true;
  }
  function set3d(li, on) {
    st.v3[li].on = on;
    const v = views[`latent-${li}`];
    v.root.classList.toggle("three", on);
    v.btn3d.setAttribute("aria-pressed", String(on));
    v.btnReset.hidden = !on;
    // focusable while in 3-D: arrow keys turn it, + and − zoom, 0 resets
    if (on) v.cv.setAttribute("tabindex", "0"); else v.cv.removeAttribute("tabindex");
    app.redraw();
  }

  // ---- data helpers ----
  const S = () => app.state.setup;
  const R = () => S()?.robot;
  function times() { // seconds since the first scan, train then test
    const s = S(), r = R();
    if (st._t && st._tFor === s) return st._t;
    const m = s.norm_x.mean[0], sc = s.norm_x.scale[0];
    const t = new Float64Array(r.n_all);
    for (let i = 0; i < s.n; i++) t[i] = s.x[i] * sc + m;
    for (let i = s.n; i < r.n_all; i++) t[i] = r.x_test[i - s.n] * sc + m;
    st._t = t; st._tFor = s;
    return t;
  }
  const dbm = (j, v) => { const s = S(), r = R(); return (v * s.norm_y.scale[j] + s.norm_y.mean[j]) * r.dbm_scale + r.dbm_offset; };
  const sdDbm = (j, vr) => { const s = S(), r = R(); return Math.sqrt(Math.max(0, vr)) * s.norm_y.scale[j] * Math.abs(r.dbm_scale); };
  // colour returns the colouring every view uses: per scan (training then
  // test) its value, its colour bin, the scans of each bin, the range and
  // the colour bar's words.
  function colour() {
    const s = S(), r = R(), mode = st.colour;
    if (st._c && st._c.setup === s && st._c.mode === mode) return st._c;
    const nAll = r.n_all, val = new Float64Array(nAll);
    let lo = Infinity, hi = -Infinity, title, unit;
    if (mode === "x" || mode === "y") {
      const k = mode === "x" ? 0 : 1;
      for (let i = 0; i < nAll; i++) val[i] = r.positions[2 * i + k];
      title = `true ${mode} position (m), ● training, ○ held-out scans`; unit = "m";
    } else if (mode.startsWith("ap:")) {
      const j = Number(mode.slice(3)), d = s.d;
      for (let i = 0; i < nAll; i++) val[i] = dbm(j, i < s.n ? s.y[i * d + j] : r.y_test[(i - s.n) * d + j]);
      title = `signal of AP ${j + 1} (${s.output_names[j]}), dBm`; unit = "dBm";
    } else {
      val.set(times());
      lo = 0;
      title = "time (● training, ○ held-out scans)"; unit = "s";
    }
    for (let i = 0; i < nAll; i++) { lo = Math.min(lo, val[i]); hi = Math.max(hi, val[i]); }
    if (!(hi > lo)) hi = lo + 1;
    const bin = new Uint8Array(nAll), bins = Array.from({ length: NB }, () => []);
    for (let i = 0; i < nAll; i++) {
      const k = Math.min(NB - 1, Math.max(0, Math.floor(((val[i] - lo) / (hi - lo)) * NB)));
      bin[i] = k; bins[k].push(i);
    }
    st._c = { setup: s, mode, val, lo, hi, bin, bins, title, unit, loText: `${fmt(lo)} ${unit}`, hiText: `${fmt(hi)} ${unit}` };
    return st._c;
  }
  function drawColorBar(ctx, x, y, w, h) {
    const c = colour();
    colorBar(ctx, x, y, w, h, c.loText, c.hiText, c.title);
  }
  const active = () => st.sel.lo >= 0 && st.sel.hi >= st.sel.lo;
  // revisits: per training scan, the scans it revisits (latent.Revisits,
  // the geometry score's pairs), from the setup.
  function partners() {
    const s = S(), r = R();
    if (st._pp && st._ppFor === s) return st._pp;
    const pp = Array.from({ length: s.n }, () => []), rp = r.revisit_pairs || [];
    for (let k = 0; k + 1 < rp.length; k += 2) { pp[rp[k]].push(rp[k + 1]); pp[rp[k + 1]].push(rp[k]); }
    st._pp = pp; st._ppFor = s;
    return pp;
  }
  // A hovered scan lights up with the scans it revisits, everywhere.
  const lit = (i) => (active() && i >= st.sel.lo && i <= st.sel.hi) || i === st.hover ||
    (st.showRevisits && st.hover >= 0 && st.hover < S().n && partners()[st.hover].includes(i));
  const anyLit = () => active() || st.hover >= 0;
  // litKey names the highlight state, for the views' redraw checks.
  const litKey = () => `${st.sel.lo},${st.sel.hi},${st.hover},${st.showRevisits}`;
  // drawRevisits draws the revisit pairs as faint links between the points
  // at (x(i), y(i)); with hover, the hovered scan's links strong. With
  // splat (the latent views), they are rasterised in script.
  function drawRevisits(ctx, x, y, { faint = true, hover = true, splat = null } = {}) {
    if (!st.showRevisits) return;
    const links = (ij, alpha, lw) => { // the links i–j for ij = [i, j, …], stroked as one path
      if (splat && lw <= 1) { // line by line, as the canvas's hairlines (crossings darken)
        for (let k = 0; k + 1 < ij.length; k += 2) splat.line(x(ij[k]), y(ij[k]), x(ij[k + 1]), y(ij[k + 1]), lw, REVISIT_RGB, alpha);
        return;
      }
      if (splat) {
        splat.union(REVISIT_RGB, alpha);
        for (let k = 0; k + 1 < ij.length; k += 2) splat.unionLine(x(ij[k]), y(ij[k]), x(ij[k + 1]), y(ij[k + 1]), lw);
        splat.fillUnion();
        return;
      }
      ctx.beginPath();
      for (let k = 0; k + 1 < ij.length; k += 2) { ctx.moveTo(x(ij[k]), y(ij[k])); ctx.lineTo(x(ij[k + 1]), y(ij[k + 1])); }
      ctx.strokeStyle = `rgba(${REVISIT_RGB},${alpha})`; ctx.lineWidth = lw; ctx.stroke();
    };
    if (faint) links(R().revisit_pairs || [], 0.10, 1);
    if (hover && st.hover >= 0 && st.hover < S().n) links(partners()[st.hover].flatMap((j) => [st.hover, j]), 0.85, 1.5);
  }
  // brushBand shades the brushed time range (scans lo…hi at x(i)) over
  // the plot s, into splat.
  function brushBand(splat, s, x, nAll) {
    if (!active()) return;
    splat.rect(x(st.sel.lo) - 2, s.box.t, x(Math.min(st.sel.hi, nAll - 1)) + 2, s.box.b, BRUSH_RGB, 0.16);
  }
  // trail draws the path through time, scan to scan (i < n), into splat.
  function trail(splat, x, y, n) {
    for (let i = 1; i < n; i++) splat.line(x(i - 1), y(i - 1), x(i), y(i), 1, TRAIL_RGB, 0.18);
  }
  // dots draws the scans i in [i0, i1) that keep(i) accepts as discs (or
  // rings) of radius rad at (x(i), y(i)), colour bin by colour bin (as one
  // path per bin). With size, scan i's radius is rad·size[i] (the 3-D
  // view's depth cue). With splat (the latent views, thousands of dots a
  // frame), they are rasterised in script (splat.js), else as paths.
  function dots(ctx, x, y, rad, i0, i1, keep, { hollow = false, size = null, splat = null } = {}) {
    const c = colour();
    if (splat) {
      const rgb = paletteRGB(NB);
      for (let k = 0; k < NB; k++) {
        const b = c.bins[k], col = rgb[k];
        for (let j = 0; j < b.length; j++) {
          const i = b[j];
          if (i < i0 || i >= i1 || (keep && !keep(i))) continue;
          const r = size ? rad * size[i] : rad;
          if (hollow) splat.ring(x(i), y(i), r, 1.3, col); else splat.disc(x(i), y(i), r, col);
        }
      }
      return;
    }
    const pal = palette(NB, 1);
    if (hollow) ctx.lineWidth = 1.3;
    for (let k = 0; k < NB; k++) {
      ctx.beginPath();
      let any = false;
      for (const i of c.bins[k]) {
        if (i < i0 || i >= i1 || (keep && !keep(i))) continue;
        const px = x(i), py = y(i), r = size ? rad * size[i] : rad;
        ctx.moveTo(px + r, py); ctx.arc(px, py, r, 0, 6.2832);
        any = true;
      }
      if (!any) continue;
      if (hollow) { ctx.strokeStyle = pal[k]; ctx.stroke(); } else { ctx.fillStyle = pal[k]; ctx.fill(); }
    }
  }
  // highlight draws the unlit scans grey and small, the lit ones in their
  // colours with a ring, into splat; it returns how many scans are lit.
  function highlight(splat, x, y, i0, i1, rad = 2.7, size = null) {
    const sz = (i) => (size ? size[i] : 1);
    splat.union(GREY_RGB, 0.35);
    for (let i = i0; i < i1; i++) if (!lit(i)) splat.unionDisc(x(i), y(i), (rad - 0.3) * sz(i));
    splat.fillUnion();
    dots(null, x, y, rad + 0.5, i0, i1, lit, { size, splat });
    let count = 0;
    splat.union(RING_RGB, 0.6);
    for (let i = i0; i < i1; i++) {
      if (!lit(i)) continue;
      splat.unionRing(x(i), y(i), (rad + 0.5) * sz(i) + 0.8, 0.8);
      count++;
    }
    splat.fillUnion();
    return count;
  }
  function nearestTime(t) {
    const ts = times();
    let best = 0;
    for (let i = 1; i < ts.length; i++) if (Math.abs(ts[i] - t) < Math.abs(ts[best] - t)) best = i;
    return best;
  }
  function nearest(n, x, y, px, py) {
    let best = -1, bd = 64;
    for (let i = 0; i < n; i++) {
      const d = (x(i) - px) ** 2 + (y(i) - py) ** 2;
      if (d < bd) { bd = d; best = i; }
    }
    return best;
  }

  // ---- interaction ----
  // inBrush: (px, py) is on the view's time axis (a plot over time, or
  // the path's time colour bar), where a drag brushes a time range.
  const inBrush = (v, px, py) => {
    const b = v.timeScale?.box;
    return !!b && b.l <= px && px <= b.r && b.t - 6 <= py && py <= (v.brushBottom ?? b.b + 16);
  };
  function wire(key, v) {
    const cv = v.cv;
    const pos = (e) => canvasPoint(cv, e);
    const li = key.startsWith("latent") ? Number(key.slice(7)) : -1;
    cv.addEventListener("pointerdown", (e) => {
      const [px, py] = pos(e);
      if (li >= 0 && st.v3[li].on) { // rotate the 3-D view
        const o = st.v3[li];
        st.drag = { key, rotate: true, x: px, y: py, yaw: o.yaw, pitch: o.pitch };
        cv.setPointerCapture(e.pointerId); e.preventDefault();
        return;
      }
      if (li >= 0) {
        const h = v.hit?.handle(px, py);
        if (h) { st.drag = { key, ...h }; cv.setPointerCapture(e.pointerId); e.preventDefault(); return; }
      }
      if (inBrush(v, px, py)) {
        const i = nearestTime(v.timeScale.ix(px));
        st.drag = { key, brush: true, from: i, moved: false };
        st.sel = { lo: i, hi: i };
        cv.setPointerCapture(e.pointerId);
        app.redraw();
      }
    });
    cv.addEventListener("pointermove", (e) => {
      const [px, py] = pos(e);
      const d = st.drag;
      if (d && d.rotate && d.key === key) {
        const o = st.v3[li];
        o.yaw = d.yaw + (px - d.x) * 0.01;
        o.pitch = Math.max(-1.55, Math.min(1.55, d.pitch + (py - d.y) * 0.01));
        app.redraw();
        return;
      }
      if (d && d.brush && v.timeScale) {
        const i = nearestTime(v.timeScale.ix(px));
        d.moved = d.moved || i !== d.from;
        st.sel = { lo: Math.min(d.from, i), hi: Math.max(d.from, i) };
        app.redraw();
        return;
      }
      if (d && d.handle !== undefined && d.key === key) {
        const p = v.hit.proj[d.proj];
        d.z[p.a] = p.s.ix(px); d.z[p.b] = p.s.iy(py);
        if (performance.now() - st.lastSend > 60) { sendMove(d); }
        app.redraw();
        return;
      }
      const h = v.hit?.point?.(px, py) ?? (v.timeScale && v.timeScale.box.l <= px && px <= v.timeScale.box.r ? nearestTime(v.timeScale.ix(px)) : -1);
      if (h !== st.hover) { st.hover = h; app.redraw(); }
    });
    const end = () => {
      const d = st.drag;
      st.drag = null;
      if (d?.handle !== undefined) sendMove(d);
      if (d?.brush && !d.moved) st.sel = { lo: -1, hi: -1 }; // a click clears the brush
      app.redraw();
    };
    cv.addEventListener("pointerup", end);
    cv.addEventListener("pointercancel", end);
    cv.addEventListener("pointerleave", () => { if (!st.drag && st.hover >= 0) { st.hover = -1; app.redraw(); } });
    if (li >= 0) {
      cv.addEventListener("keydown", (e) => {
        const o = st.v3[li];
        if (!o.on) return;
        const turn = { ArrowLeft: [-0.1, 0], ArrowRight: [0.1, 0], ArrowUp: [0, -0.1], ArrowDown: [0, 0.1] }[e.key];
        if (turn) { o.yaw += turn[0]; o.pitch = Math.max(-1.55, Math.min(1.55, o.pitch + turn[1])); }
        else if (e.key === "+" || e.key === "=") o.zoom = Math.min(10, o.zoom * 1.2);
        else if (e.key === "-") o.zoom = Math.max(0.3, o.zoom / 1.2);
        else if (e.key === "0") Object.assign(o, VIEW3D);
        else return;
        e.preventDefault(); e.stopPropagation(); // not the page's shortcuts
        app.redraw();
      });
      cv.addEventListener("wheel", (e) => {
        if (!st.v3[li].on) return;
        e.preventDefault();
        const o = st.v3[li];
        o.zoom = Math.max(0.3, Math.min(10, o.zoom * Math.exp(-e.deltaY * 0.0015)));
        app.redraw();
      }, { passive: false });
    }
  }
  function sendMove(d) {
    st.lastSend = performance.now();
    const z = d.z.map((v) => Math.max(-1000, Math.min(1000, v)));
    app.send({ op: "move", layer: d.layer, index: d.handle, z });
  }

  // ---- latent views ----
  function latentTitle(li, v, f) {
    const sc = f.robot?.scores?.[li], three = st.v3[li].on && f.layers[li].d >= 3;
    setText(v.title, `Hidden layer ${li + 1} (h${li + 1}): message means${three ? " in 3-D (drag or arrow keys to turn, wheel or +/− to zoom)" : ", halos ±2 sd"}` +
      `${st.showTest && st.testH ? ", ○ held-out scans (predicted from time alone)" : ""}, ◆ layer ${li + 2}'s inducing inputs${three ? "" : " (drag)"}` +
      (sc != null ? ` · geometry score ${sc.toFixed(3)}` : ""));
  }

  function drawLatent(li, v, f, n) {
    const L = f.layers[li], D = L.d, next = f.layers[li + 1];
    const plot = v.plot;
    if (!plot.begin(false)) return; // overlay() replaces the pixels
    const T = st.showTest ? st.testH?.[li] : null; // held-out scans: predicted from time alone
    const nT = T && T.d === D ? T.n : 0;
    const M = (i, a) => (i < n ? L.mean[i * D + a] : T.mean[(i - n) * D + a]);
    const rng = latentRanges(li, f, D, n + nT, M);
    if (D >= 3 && st.v3[li].on) draw3d(li, v, L, next, n, nT, M, rng);
    else draw2d(li, v, L, next, n, nT, M, rng);
    v.cv.dataset.colourbar = colour().title;
    latentTitle(li, v, f);
  }
  // latentLayer draws a latent view (overlay()): its static layer is its
  // colour bar and whatever axes draws (key names them).
  function latentLayer(v, key, axes, marks) {
    const plot = v.plot, c = colour();
    overlay(v, plot, `${plot.w}x${plot.h}|${c.title}|${c.loText}|${c.hiText}|${key}`, (ctx) => {
      axes?.();
      drawColorBar(ctx, plot.m.l, plot.h - CB + 4, plot.w - plot.m.l - plot.m.r, 8);
    }, marks);
  }

  // latentRanges returns each dimension's range over the training and
  // held-out scans, which every view of the layer shares. While the
  // optimizer runs they grow at once and shrink slowly (StickyRange), so
  // the axes do not jitter from frame to frame. They are shown snapped
  // outward to a grid (snapRange) and kept until the data leave them or
  // they are a third too wide, so that the axes, the views' static layer,
  // change now and then, not with every frame. A frame that shows a
  // command's effect (a restart, an undo) or new data sets them afresh.
  function latentRanges(li, f, D, nn, M) {
    const key = `${st.dataId}|${D}|${nn}`;
    let r = st.rng[li];
    const fresh = !r || r.key !== key || r.applied !== f.applied;
    if (fresh) { r = st.rng[li] = { key, applied: f.applied, frame: null, dims: Array.from({ length: D }, () => new StickyRange()), shown: [] }; }
    if (r.frame !== f) { // once per frame, not per redraw
      r.frame = f;
      for (let a = 0; a < D; a++) {
        let lo = Infinity, hi = -Infinity;
        for (let i = 0; i < nn; i++) { const x = M(i, a); if (x < lo) lo = x; if (x > hi) hi = x; }
        r.dims[a].update(lo, hi);
        // shown anew when the data leave it or it has grown a third too wide
        const c = snapRange(r.dims[a]), o = r.shown[a];
        if (!o || c.lo < o.lo || c.hi > o.hi || 4 * (c.hi - c.lo) < 3 * (o.hi - o.lo)) r.shown[a] = c;
      }
    }
    return r.shown;
  }

  function draw2d(li, v, L, next, n, nT, M, rng) {
    const D = L.d, plot = v.plot, w = plot.w, h = plot.h;
    const pairs = D >= 3 ? [[0, 1], [0, 2], [1, 2]] : D === 2 ? [[0, 1]] : [[0, 0]];
    const gap = 14, pw = (w - gap * (pairs.length - 1)) / pairs.length;
    const any = anyLit(), nn = n + nT, c = colour(), sp = (v.splat ??= new Splat()); // overlay() draws with it
    let count = 0;
    v.hit = { proj: [], handle: null, point: null };
    // The projections side by side, each drawn in layers over the static
    // one (axes, colour bar): halos, the path through time and the
    // revisit links, the scans, the inducing inputs. All but the static
    // layer are rasterised in script (splat.js), each clipped to its
    // projection's box, and put on the canvas in one image copy.
    const P = pairs.map(([a, b], pi) => {
      const x0p = pi * (pw + gap);
      const box = { l: x0p + plot.m.l, r: x0p + pw - 4, t: plot.m.t, b: h - plot.m.b - CB };
      const xa = rng[a].lo, xb = rng[a].hi, ya = rng[b].lo, yb = rng[b].hi;
      const px = 0.08 * (xb - xa || 1), py = 0.08 * (yb - ya || 1);
      const s = plot.area(xa - px, xb + px, ya - py, yb + py, box, { equal: true });
      v.hit.proj.push({ s, a, b });
      // every scan's screen position in this projection, once
      const buf = (v.buf ??= [])[pi] ??= { x: new Float32Array(0), y: new Float32Array(0) };
      if (buf.x.length < nn) { buf.x = new Float32Array(nn); buf.y = new Float32Array(nn); }
      const bx = buf.x, by = buf.y;
      for (let i = 0; i < nn; i++) { bx[i] = s.sx(M(i, a)); by[i] = s.sy(M(i, b)); }
      // inducing inputs of the next layer live in this space: draggable
      // (on top of the scans, except under the scans a highlight picks)
      const handles = () => {
        if (!next || next.q !== D) return;
        for (let k = 0; k < next.m; k++) {
          const dz = st.drag && st.drag.layer === li + 1 && st.drag.handle === k ? st.drag.z : null;
          const zx = dz ? dz[a] : next.z[k * D + a], zy = dz ? dz[b] : next.z[k * D + b];
          handle(sp, s.sx(zx), s.sy(zy), !!dz);
        }
      };
      return { a, b, box, s, bx, by, X: (i) => bx[i], Y: (i) => by[i], handles };
    });
    const axes = () => P.forEach((p, pi) => {
      Object.assign(plot, p.s);
      plot.axes({ xlabel: `h${li + 1}[${p.a}]`, ylabel: `h${li + 1}[${p.b}]`, xlabelAt: p.box.b + 30, ylabelAt: pi * (pw + gap) + 13 });
    });
    latentLayer(v, `${li}|${P.map(({ s }) => [s.x0, s.x1, s.y0, s.y1]).join()}`, axes, () => {
      // halos (±2 sd in each projected dimension), batched by colour bin (a
      // halo inside its scan's opaque dot would not show: not drawn)
      const rgb = paletteRGB(NB), hidden = (any ? 3.2 : 2.7) - 0.5;
      for (const p of P) {
        const { a, b, box, bx, by } = p, kx = p.s.sx(1) - p.s.sx(0); // px per unit, both axes
        sp.clip(box.l, box.t, box.r, box.b);
        for (let k = 0; k < NB; k++) {
          sp.union(rgb[k], 0.1);
          for (const i of c.bins[k]) {
            if (i >= n || (any && !lit(i))) continue;
            const rx = Math.max(0.5, kx * 2 * Math.sqrt(Math.max(0, L.var[i * D + a])));
            const ry = Math.max(0.5, kx * 2 * Math.sqrt(Math.max(0, L.var[i * D + b])));
            if (rx > hidden || ry > hidden) sp.unionEllipse(bx[i], by[i], rx, ry);
          }
          sp.fillUnion();
        }
      }
      P.forEach((p, pi) => {
        sp.clip(p.box.l, p.box.t, p.box.r, p.box.b);
        trail(sp, p.X, p.Y, n);
        drawRevisits(null, p.X, p.Y, { splat: sp });
        if (any) {
          p.handles();
          const k = highlight(sp, p.X, p.Y, 0, n);
          if (pi === 0) count = k;
        } else dots(null, p.X, p.Y, 2.7, 0, n, null, { splat: sp });
        if (nT) dots(null, p.X, p.Y, 2.6, n, nn, any ? lit : null, { hollow: true, splat: sp });
        if (!any) p.handles();
      });
    });
    v.hit.handle = (px, py) => {
      if (!next || next.q !== D) return null;
      for (let p = 0; p < v.hit.proj.length; p++) {
        const { s, a, b } = v.hit.proj[p];
        for (let k = 0; k < next.m; k++) {
          if (Math.abs(s.sx(next.z[k * D + a]) - px) < 7 && Math.abs(s.sy(next.z[k * D + b]) - py) < 7) {
            return { layer: li + 1, handle: k, proj: p, z: Array.from(next.z.slice(k * D, k * D + D)) };
          }
        }
      }
      return null;
    };
    v.hit.point = (px, py) => {
      const p = v.hit.proj.find((q) => q.s.box.l <= px && px <= q.s.box.r);
      return p ? nearest(n, (i) => p.s.sx(L.mean[i * D + p.a]), (i) => p.s.sy(L.mean[i * D + p.b]), px, py) : -1;
    };
    v.screen = (i) => [v.buf[0].x[i], v.buf[0].y[i]];
    v.cv.dataset.highlighted = String(count);
  }

  // handle draws an inducing input's diamond into splat (hot: dragged).
  function handle(splat, x, y, hot) {
    splat.diamond(x, y, 4.5, hot ? HANDLE_HOT_RGB : HANDLE_RGB, hot ? 1 : 0.85, 1, WHITE_RGB);
  }

  // draw3d draws the layer's first three dimensions as one orthographic
  // view turned by yaw (about h[2]) and pitch, inside the box of the data.
  function draw3d(li, v, L, next, n, nT, M, rng) {
    const D = L.d, plot = v.plot, ctx = plot.ctx, w = plot.w, h = plot.h, o = st.v3[li];
    const box = { l: 8, r: w - 8, t: plot.m.t, b: h - plot.m.b - CB + 16 };
    const lo = [0, 1, 2].map((a) => rng[a].lo), hi = [0, 1, 2].map((a) => rng[a].hi);
    const c = lo.map((l, a) => (l + hi[a]) / 2);
    // the data box's half-diagonal: fits the view at every angle
    const R = Math.max(1e-9, Math.hypot(...lo.map((l, a) => (hi[a] - l) / 2)));
    const cy = Math.cos(o.yaw), sy = Math.sin(o.yaw), cp = Math.cos(o.pitch), sp = Math.sin(o.pitch);
    const k = (o.zoom * 0.96 * Math.min(box.r - box.l, box.b - box.t)) / (2 * R);
    const mx = (box.l + box.r) / 2, my = (box.t + box.b) / 2;
    // world (data units) → screen
    const P = (x0, x1, x2) => {
      const u0 = x0 - c[0], u1 = x1 - c[1], u2 = x2 - c[2];
      const X = cy * u0 - sy * u1, Dp = sy * u0 + cy * u1;
      return [mx + k * X, my - k * (cp * u2 + sp * Dp)];
    };
    // project every scan once; nearer scans are drawn larger (depth cue)
    const nn = n + nT;
    if (!v.px || v.px.length < nn) { v.px = new Float32Array(nn); v.py = new Float32Array(nn); v.pz = new Float32Array(nn); }
    const pxs = v.px, pys = v.py, size = v.pz;
    for (let i = 0; i < nn; i++) { // P() inlined: no array per scan
      const u0 = M(i, 0) - c[0], u1 = M(i, 1) - c[1], u2 = M(i, 2) - c[2];
      const Dp = sy * u0 + cy * u1;
      pxs[i] = mx + k * (cy * u0 - sy * u1); pys[i] = my - k * (cp * u2 + sp * Dp);
      const toward = sp * u2 - cp * Dp; // along the direction to the viewer
      size[i] = Math.max(0.6, Math.min(1.45, 1 + (0.4 * toward) / R));
    }
    const X = (i) => pxs[i], Y = (i) => pys[i];
    // in script over the colour bar (splat.js): the data's box, the axes'
    // triad, the path, the revisit links, the scans and the inducing
    // inputs; then the words, on the canvas
    const gx = box.l + 46, gy = box.b - 40, tips = [], any = anyLit();
    let count = 0;
    latentLayer(v, "3d", null, (spl) => {
      spl.clip(box.l, box.t, box.r, box.b);
      // the data's box, its edges along each axis
      const corner = (m) => P(m & 1 ? hi[0] : lo[0], m & 2 ? hi[1] : lo[1], m & 4 ? hi[2] : lo[2]);
      for (let m = 0; m < 8; m++) for (const bit of [1, 2, 4]) if (!(m & bit)) spl.line(...corner(m), ...corner(m | bit), 1, BOX_RGB, 1);
      // the axes: a turning triad in the corner, with the axes' names
      for (let a = 0; a < 3; a++) {
        const u = [0, 0, 0]; u[a] = 30 / k;
        const [ex, ey] = P(c[0] + u[0], c[1] + u[1], c[2] + u[2]);
        const dx = ex - mx, dy = ey - my, len = Math.hypot(dx, dy) || 1;
        spl.line(gx, gy, gx + dx, gy + dy, 2, AXIS_RGB[a], 1);
        let tx = gx + dx + (dx / len) * 14, ty = gy + dy + (dy / len) * 9;
        // labels of axes seen nearly end-on would overlap: move them apart
        while (tips.some(([px, py]) => Math.abs(px - tx) < 34 && Math.abs(py - ty) < 12)) ty += 12;
        tips.push([tx, ty]);
      }
      trail(spl, X, Y, n);
      drawRevisits(null, X, Y, { splat: spl });
      const handles = () => {
        if (next && next.q === D) for (let j = 0; j < next.m; j++) { const [a, b] = P(next.z[j * D], next.z[j * D + 1], next.z[j * D + 2]); handle(spl, a, b, false); }
      };
      if (any) handles();
      if (any) count = highlight(spl, X, Y, 0, n, 3, size); else dots(null, X, Y, 3, 0, n, null, { size, splat: spl });
      if (nT) dots(null, X, Y, 2.8, n, nn, any ? lit : null, { hollow: true, size, splat: spl });
      if (!any) handles();
      spl.touch(box.l, box.t, box.r, box.b); // the words below
    });
    ctx.save();
    ctx.beginPath(); ctx.rect(box.l, box.t, box.r - box.l, box.b - box.t); ctx.clip();
    ctx.textAlign = "center"; ctx.textBaseline = "middle";
    tips.forEach(([tx, ty], a) => { ctx.fillStyle = `rgb(${AXIS_RGB[a]})`; ctx.fillText(`h${li + 1}[${a}]`, tx, ty); });
    ctx.textAlign = "left"; ctx.textBaseline = "top"; ctx.fillStyle = "#475569";
    ctx.fillText([0, 1, 2].map((a) => `h${li + 1}[${a}] ${lo[a].toFixed(1)} … ${hi[a].toFixed(1)}`).join("   ").replaceAll("-", "−"), box.l + 4, box.t);
    ctx.restore();
    v.hit = { proj: [], handle: () => null, point: (px, py) => nearest(n, X, Y, px, py) };
    v.screen = (i) => [pxs[i], pys[i]];
    v.cv.dataset.highlighted = String(count);
  }

  // ---- path ----
  function drawPath(v) {
    const s0 = S(), r = R(), nAll = r.n_all, P = r.positions, plot = v.plot;
    const key = `${sizeKey(v.cv)}|${st.colour}|${litKey()}`;
    if (v.drawn === key) return;
    if (!plot.begin(false)) return; // overlay() replaces the pixels
    v.drawn = key;
    const { w, h } = plot;
    let xa = Infinity, xb = -Infinity, ya = Infinity, yb = -Infinity;
    for (let i = 0; i < nAll; i++) { xa = Math.min(xa, P[2 * i]); xb = Math.max(xb, P[2 * i]); ya = Math.min(ya, P[2 * i + 1]); yb = Math.max(yb, P[2 * i + 1]); }
    const s = plot.area(xa - 1, xb + 1, ya - 1, yb + 1, { l: plot.m.l, r: w - plot.m.r, t: plot.m.t, b: h - 80 }, { equal: true });
    const X = (i) => s.sx(P[2 * i]), Y = (i) => s.sy(P[2 * i + 1]);
    const any = anyLit();
    const cbY = h - 44; // the colour bar, its labels and (when narrow) its title's own line
    // The static layer: axes, the path, the revisit links, every scan in
    // its colour (or grey under a highlight), the colour bar.
    let count = 0;
    overlay(v, plot, `${st.colour}|${any}|${st.showRevisits}`, (ctx) => {
      plot.axes({ xlabel: "x (m)", ylabel: "y (m)", xlabelAt: s.box.b + 30 });
      ctx.strokeStyle = "rgba(60,60,60,0.2)"; ctx.lineWidth = 1; ctx.beginPath();
      for (let i = 0; i < nAll; i++) ctx.lineTo(X(i), Y(i));
      ctx.stroke();
      drawRevisits(ctx, X, Y, { hover: false });
      if (any) {
        ctx.beginPath();
        for (let i = 0; i < nAll; i++) { ctx.moveTo(X(i) + 2.5, Y(i)); ctx.arc(X(i), Y(i), 2.5, 0, 6.2832); }
        ctx.fillStyle = GREY; ctx.fill();
      } else {
        dots(ctx, X, Y, 3, 0, s0.n);
        dots(ctx, X, Y, 3, s0.n, nAll, null, { hollow: true });
      }
      ctx.fillStyle = "#1f2933"; ctx.textAlign = "left"; ctx.textBaseline = "bottom";
      ctx.fillText("start", X(0) + 6, Y(0) - 4);
      drawColorBar(ctx, plot.m.l, cbY, w - plot.m.l - plot.m.r, 9);
    }, any ? (sp) => { // the highlighted scans
      drawRevisits(null, X, Y, { faint: false, splat: sp });
      dots(null, X, Y, 3.2, 0, s0.n, lit, { splat: sp });
      dots(null, X, Y, 3.2, s0.n, nAll, lit, { hollow: true, splat: sp });
      for (let i = 0; i < nAll; i++) if (lit(i)) { sp.ring(X(i), Y(i), 4.5, 1, RING_RGB); count++; }
    } : null);
    v.hit = { point: (px, py) => nearest(nAll, X, Y, px, py) };
    v.screen = (i) => [X(i), Y(i)];
    // the colour bar brushes a time range when it shows time
    const cb = { l: plot.m.l, r: w - plot.m.r, t: cbY, b: cbY + 9 };
    v.timeScale = st.colour === "time" ? plot.area(0, times()[nAll - 1], 0, 1, cb) : null;
    v.cv.dataset.highlighted = String(count);
    v.cv.dataset.colourbar = colour().title;
  }

  // ---- signals ----
  function drawSignals(v) {
    const s0 = S(), r = R(), n = s0.n, nAll = r.n_all, d = s0.d, ts = times(), plot = v.plot;
    const j = st.ap < 0 ? defaultAP() : st.ap;
    if (st.ap < 0) { st.ap = j; v.select.value = String(j); }
    const key = `${sizeKey(v.cv)}|${j}|${st.analysis}|${st.colour === "time"}|${litKey()}`;
    if (v.drawn === key) return;
    if (!plot.begin(false)) return; // overlay() replaces the pixels
    v.drawn = key;
    const { w, h } = plot;
    const tmax = ts[nAll - 1];
    const s = plot.area(-0.01 * tmax, 1.01 * tmax, -95, Math.max(-40, yMax(j)), { l: plot.m.l, r: w - plot.m.r, t: plot.m.t, b: h - plot.m.b - 22 });
    const X = (i) => s.sx(ts[i]);
    const Yv = (i) => s.sy(dbm(j, i < n ? s0.y[i * d + j] : r.y_test[(i - n) * d + j]));
    const filled = (i) => r.filled[i * d + j] > 0.5;
    const any = anyLit();
    // scans draws the scans keep(i) accepts (all without keep): data ●,
    // fill-ins ○; with sp (the highlighted ones), in script
    const scans = (c, keep, rad, sp = null) => {
      if (sp) {
        for (let i = 0; i < nAll; i++) if (keep(i) && !filled(i)) sp.disc(X(i), Yv(i), rad, DATA_RGB);
        for (let i = 0; i < nAll; i++) if (keep(i) && filled(i)) sp.ring(X(i), Yv(i), rad, 1, FILLIN_RGB);
        return;
      }
      const dotsP = new Path2D(), rings = new Path2D();
      for (let i = 0; i < nAll; i++) {
        if (keep && !keep(i)) continue;
        const p = filled(i) ? rings : dotsP, x = X(i), y = Yv(i);
        p.moveTo(x + rad, y); p.arc(x, y, rad, 0, 6.2832);
      }
      c.fillStyle = `rgba(${DATA_RGB},${any ? 0.25 : 1})`; c.fill(dotsP);
      c.strokeStyle = `rgba(${FILLIN_RGB},${any ? 0.4 : 1})`; c.lineWidth = 1; c.stroke(rings);
    };
    let count = 0;
    overlay(v, plot, `${j}|${st.analysis}|${any}|${st.colour === "time"}`, (c) => {
      plot.axes({ ylabel: "dBm" });
      const band = (k0, k1, mean, vr, off) => {
        if (!mean) return;
        c.beginPath();
        for (let i = k0; i < k1; i++) c.lineTo(X(i), s.sy(dbm(j, mean[(i - off) * d + j]) + 2 * sdDbm(j, vr[(i - off) * d + j])));
        for (let i = k1 - 1; i >= k0; i--) c.lineTo(X(i), s.sy(dbm(j, mean[(i - off) * d + j]) - 2 * sdDbm(j, vr[(i - off) * d + j])));
        c.closePath(); c.fillStyle = "rgba(37,99,235,0.18)"; c.fill();
        c.beginPath();
        for (let i = k0; i < k1; i++) c.lineTo(X(i), s.sy(dbm(j, mean[(i - off) * d + j])));
        c.strokeStyle = "#1d4ed8"; c.lineWidth = 1.8; c.stroke();
      };
      band(0, n, st.out, st.outVar, 0);
      c.setLineDash([4, 3]);
      band(n, nAll, st.test, st.testVar, n);
      c.setLineDash([]);
      const xs = (X(n - 1) + X(n)) / 2; // the split
      c.strokeStyle = "#64748b"; c.lineWidth = 1; c.setLineDash([2, 3]); c.beginPath(); c.moveTo(xs, s.box.t); c.lineTo(xs, s.box.b); c.stroke(); c.setLineDash([]);
      c.fillStyle = "#475569"; c.textBaseline = "top";
      c.textAlign = "right"; c.fillText("training scans ◀", xs - 4, s.box.t + 2);
      c.textAlign = "left"; c.fillText("▶ held-out test scans", xs + 4, s.box.t + 2);
      scans(c, null, 2.4);
      timeBar(c, s, h, "time (s) — drag here or on the plot to brush a time range; click to clear");
    }, any ? (sp) => { // the brush and the highlighted scans
      brushBand(sp, s, X, nAll);
      scans(null, lit, 2.4, sp);
      for (let i = 0; i < nAll; i++) if (lit(i)) { sp.ring(X(i), Yv(i), 3.6, 1.3, GOLD_RGB); count++; }
    } : null);
    v.timeScale = s; v.brushBottom = h;
    v.cv.dataset.highlighted = String(count);
    setText(v.title, `Signal strength of access point ${j + 1} (${s0.output_names[j]}): data ●, −92 dBm fill-ins ○, posterior mean and ±2 sd (dashed: test scans)`);
  }
  // timeBar labels a time axis under a plot: the time colour bar when the
  // views are coloured by time, else the words alone.
  function timeBar(ctx, s, h, title) {
    const tmax = times()[R().n_all - 1];
    if (st.colour === "time") { colorBar(ctx, s.box.l, h - 30, s.box.r - s.box.l, 9, "0 s", `${fmt(tmax)} s`, title); return; }
    ctx.fillStyle = "#5f6b7a"; ctx.textAlign = "center"; ctx.textBaseline = "top"; ctx.font = "11px system-ui, sans-serif";
    ctx.fillText(title, (s.box.l + s.box.r) / 2, h - 28);
  }
  function defaultAP() { // the access point with the most real readings
    const s0 = S(), r = R(), d = s0.d;
    let best = 0, bc = -1;
    for (let j = 0; j < d; j++) {
      let c = 0;
      for (let i = 0; i < r.n_all; i++) if (r.filled[i * d + j] < 0.5) c++;
      if (c > bc) { bc = c; best = j; }
    }
    return best;
  }
  function yMax(j) {
    const s0 = S(), d = s0.d;
    let m = -Infinity;
    for (let i = 0; i < s0.n; i++) m = Math.max(m, dbm(j, s0.y[i * d + j]));
    return m + 6;
  }

  // ---- penalties ----
  function drawPenalties(v, f) {
    const s0 = S(), r = R(), n = s0.n, nAll = r.n_all, ts = times(), plot = v.plot;
    const L = f.layers;
    const key = `${sizeKey(v.cv)}|${st.analysis}|${!!L[0].comp}|${st.colour === "time"}|${litKey()}`;
    if (v.drawn === key) return;
    if (!plot.begin(false)) return; // overlay() replaces the pixels
    v.drawn = key;
    const { w, h } = plot;
    if (!L[0].comp) { v.cv.dataset.highlighted = "0"; return; }
    let top = 0;
    const tot = new Float64Array(n);
    for (let i = 0; i < n; i++) { for (const l of L) tot[i] += Math.max(0, l.comp?.[i] ?? 0) + Math.max(0, l.prop?.[i] ?? 0); top = Math.max(top, tot[i]); }
    const tmax = ts[nAll - 1];
    const s = plot.area(-0.01 * tmax, 1.01 * tmax, 0, top * 1.05 || 1, { l: plot.m.l, r: w - plot.m.r, t: plot.m.t, b: h - plot.m.b - 22 });
    const any = anyLit();
    // stacked areas, one polygon per layer and term
    let count = 0;
    overlay(v, plot, `${st.analysis}|${any}|${st.colour === "time"}`, (c) => {
      const font = c.font;
      plot.axes({ ylabel: "nats" });
      const base = new Float64Array(n);
      L.forEach((l, li) => {
        for (const [arr, alpha] of [[l.comp, 1], [l.prop, 0.45]]) {
          if (!arr) continue;
          c.beginPath();
          for (let i = 0; i < n; i++) c.lineTo(s.sx(ts[i]), s.sy(base[i] + Math.max(0, arr[i])));
          for (let i = n - 1; i >= 0; i--) c.lineTo(s.sx(ts[i]), s.sy(base[i]));
          c.closePath();
          c.globalAlpha = any ? 0.55 * alpha : alpha;
          c.fillStyle = LAYER_COL[li % LAYER_COL.length]; c.fill();
          for (let i = 0; i < n; i++) base[i] += Math.max(0, arr[i]);
        }
      });
      c.globalAlpha = 1;
      timeBar(c, s, h, "time (s), training scans");
      c.textAlign = "left"; c.textBaseline = "middle"; c.font = font;
      let lx = s.box.l + 8;
      L.forEach((l, li) => {
        for (const [nm, alpha] of [["compression", 1], ["propagation", 0.45]]) {
          c.globalAlpha = alpha; c.fillStyle = LAYER_COL[li % LAYER_COL.length]; c.fillRect(lx, s.box.t + 6, 10, 8); c.globalAlpha = 1;
          c.fillStyle = "#334155"; const t = `layer ${li + 1} ${nm}`; c.fillText(t, lx + 13, s.box.t + 10); lx += c.measureText(t).width + 24;
        }
      });
    }, any ? (sp) => { // the brush, the highlighted scans' totals as ticks
      const X = (i) => s.sx(ts[i]);
      brushBand(sp, s, X, nAll);
      for (let i = 0; i < n; i++) if (lit(i)) { count++; sp.line(X(i), s.sy(tot[i]), X(i), s.sy(0), 1, TICK_RGB, 0.55); }
    } : null);
    v.timeScale = s; v.brushBottom = h;
    v.cv.dataset.highlighted = String(count);
  }

  // ---- readouts ----
  function readout(f) {
    const rr = f.robot || {};
    const set = (id, v) => { const e = root.querySelector(`[data-testid="${id}"]`); if (e) setText(e, v); };
    const sc = rr.scores || [];
    // No revisits on the path (a short recording): say so, not "–".
    const none = rr.scores && rr.revisits === 0 ? "no revisits" : "–";
    set("score-1", sc[0] != null ? sc[0].toFixed(3) : none);
    set("score-2", sc[1] != null ? sc[1].toFixed(3) : none);
    set("score-time", R().time_score.toFixed(3));
    set("rmse-model", rr.test_rmse != null ? `${rr.test_rmse.toFixed(2)}` : "–");
    set("rmse-mean", rr.mean_rmse != null ? `${rr.mean_rmse.toFixed(2)}` : "…");
    set("rmse-gp1", rr.gp1_rmse != null ? `${rr.gp1_rmse.toFixed(2)}` : "computing…");
    // Say it in words where the deep GP is worse on the held-out scans, and why.
    const base = [["the training mean", rr.mean_rmse], ["a one-layer GP", rr.gp1_rmse]].filter(([, v]) => v != null);
    const better = base.filter(([, v]) => rr.test_rmse != null && v < rr.test_rmse);
    set("rmse-verdict", rr.test_rmse == null || base.length === 0 ? "" : better.length
      ? `On the held-out scans the deep GP (${rr.test_rmse.toFixed(1)} dBm) does worse than ${better.map(([n, v]) => `${n} (${v.toFixed(1)} dBm)`).join(" and ")}: ` +
        "its input is time and the held-out scans come after the training scans, so it must extrapolate in time, where a GP reverts to its mean with growing uncertainty. Its strength here is the latent map, not forecasting."
      : `On the held-out scans the deep GP (${rr.test_rmse.toFixed(1)} dBm) does better than ${base.map(([n]) => n).join(" and ")}.`);
    restarts(rr.restarts);
  }
  // restarts fills the table of the preset's restarts (rebuilt only when
  // they change); "use" switches the live model to one (undoable).
  function restarts(rs) {
    const box = restartBody?.closest("[data-testid='robot-restarts']");
    if (!box) return;
    box.hidden = !rs;
    const key = rs ? JSON.stringify(rs) : "";
    if (!rs || restartBody.dataset.key === key) return;
    restartBody.dataset.key = key;
    restartBody.replaceChildren(...rs.list.map((r) => {
      const use = el("button", { type: "button", "data-testid": `robot-restart-use-${r.restart}`,
        title: r.restart === rs.live ? "The live model started from this restart" : `Continue from restart ${r.restart}'s model (undo goes back)` }, r.restart === rs.live ? "live" : "use");
      if (r.restart === rs.live || r.bound == null) use.disabled = true;
      use.addEventListener("click", () => app.send({ op: "restart", restart: r.restart }));
      const tr = el("tr", { "data-testid": `robot-restart-${r.restart}`, class: r.restart === rs.live ? "live" : "" },
        el("td", { text: `${r.restart}${r.restart === rs.chosen ? " ★" : ""}` }),
        el("td", { text: r.init === "linear" ? "time" : r.init === "pca" ? "PCA of the signals" : r.init }),
        el("td", { text: String(r.iters) }),
        el("td", { text: r.bound != null ? r.bound.toFixed(1) : r.failure || "failed" }),
        el("td", { text: r.score != null ? r.score.toFixed(3) : "–" }),
        el("td", {}, use));
      return tr;
    }));
  }

  // ---- export ----
  // The CSV is the server's (/figure/latent.csv): every layer at the
  // training and held-out scans, time, true x/y, train/test and variances —
  // one table for the page and for scripts.
  function exportCSV() {
    const key = app.state.figureKey;
    if (!key) return;
    const a = document.createElement("a");
    a.href = `/figure/latent.csv?session=${encodeURIComponent(key)}`;
    a.download = "dgpviz-robot-latent.csv";
    document.body.append(a); a.click(); a.remove();
  }
  function exportPNG() {
    const cvs = [views["latent-0"].cv, views["latent-1"].cv, views.path.cv];
    const W = Math.max(cvs[0].width, cvs[1].width) + cvs[2].width, H = Math.max(cvs[0].height + cvs[1].height, cvs[2].height);
    const out = document.createElement("canvas");
    out.width = W; out.height = H;
    const c = out.getContext("2d");
    c.fillStyle = "#fff"; c.fillRect(0, 0, W, H);
    c.drawImage(cvs[0], 0, 0); c.drawImage(cvs[1], 0, cvs[0].height); c.drawImage(cvs[2], Math.max(cvs[0].width, cvs[1].width), 0);
    out.toBlob((b) => b && download(b, "dgpviz-robot-latent.png"), "image/png");
  }
  function download(blob, name) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob); a.download = name;
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }
  // The server's gonum/plot figure of the session's current model.
  for (const a of root.querySelectorAll(".robot-figure-links a")) {
    a.addEventListener("click", (ev) => {
      const key = app.state.figureKey;
      if (!key) { ev.preventDefault(); return; }
      a.href = `/figure/latent.${a.dataset.format}?session=${encodeURIComponent(key)}`;
      a.download = `dgpviz-robot-latent.${a.dataset.format}`;
    });
  }
  root.querySelector('[data-testid="robot-export-csv"]')?.addEventListener("click", exportCSV);
  root.querySelector('[data-testid="robot-export-png"]')?.addEventListener("click", exportPNG);

  // The panel: its drawing, and selection, colouring, the 3-D views and
  // statistics for tests and tours (window.dgpviz.panels.robot).
  return {
    select(lo, hi) { st.sel = { lo, hi }; app.redraw(); },
    clear() { st.sel = { lo: -1, hi: -1 }; st.hover = -1; app.redraw(); },
    get sel() { return { ...st.sel, hover: st.hover }; },
    hover(i) { st.hover = i; app.redraw(); },
    revisitsOf: (i) => partners()[i]?.slice() ?? [],
    // colourBy sets the colouring ("time", "x", "y" or "ap:J").
    colourBy(mode) { st.colour = mode; if (colourSel) colourSel.value = mode; app.redraw(); },
    // colourBin is scan i's colour bin (0…23) on the current scale.
    colourBin: (i) => colour().bin[i],
    view3d(li, on) { if (on !== undefined) set3d(li, on); return { ...st.v3[li] }; },
    turn3d(li, yaw, pitch, zoom) { Object.assign(st.v3[li], { yaw, pitch, zoom }); app.redraw(); },
    // screen is scan i's position, in CSS pixels of the view's canvas, as
    // last drawn (a latent view's first projection, or its 3-D view).
    screen: (key, i) => views[key]?.screen?.(i) ?? null,
    stats: st.stats,
    layerPaints: () => ({ ...layerPaints }),
    draw(state) {
      const r = state.setup?.robot;
      document.body.classList.toggle("robot-mode", !!r);
      root.hidden = !r;
      if (!r) { built = false; return; }
      const f = state.frame;
      if (!built || st.dataId !== state.setup.data_id) {
        st.dataId = state.setup.data_id; st.ap = -1; st.out = st.test = st.testH = null; st.sel = { lo: -1, hi: -1 };
        build(state.setup);
      }
      if (!f || f.layers.length < 2) return;
      performance.mark("robot-draw-start");
      const last = f.layers[f.layers.length - 1];
      if (f !== st.lastFrame) {
        if (f.robot?.new_output && last.mean) { st.out = last.mean; st.outVar = last.var; st.analysis++; }
        if (f.robot?.test) { st.test = f.robot.test.mean; st.testVar = f.robot.test.var; st.testH = f.robot.test_hidden; }
        if (st.stats.lastSeq >= 0 && f.seq > st.stats.lastSeq + 1) st.stats.missed += f.seq - st.stats.lastSeq - 1;
        st.stats.lastSeq = f.seq; st.stats.frames++;
      }
      st.lastFrame = f;
      const n = state.setup.n, nh = f.layers.length - 1;
      // each view's drawing time, as performance measures "robot-<view>"
      let t = performance.now();
      const lap = (name) => { const t1 = performance.now(); performance.measure(`robot-${name}`, { start: t, end: t1 }); t = t1; };
      for (let li = 0; li < 2; li++) {
        const v = views[`latent-${li}`];
        v.root.hidden = li >= nh || !f.layers[li].mean;
        v.btn3d.hidden = v.root.hidden || f.layers[li].d < 3;
        if (st.v3[li].on && f.layers[li].d < 3) set3d(li, false); // a new architecture without a 3-D layer
        if (!v.root.hidden) drawLatent(li, v, f, n);
      }
      lap("latent");
      drawPath(views.path);
      lap("path");
      drawSignals(views.signals);
      lap("signals");
      drawPenalties(views.penalties, f);
      lap("penalties");
      readout(f);
      performance.measure("robot-draw", "robot-draw-start");
      st.stats.draws++;
    },
  };
});
