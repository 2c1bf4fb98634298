// The explorer at scale (docs/protocol.md, "Large data"). Data of more
// rows than a frame can carry arrive as a stable sample of them (the
// setup's "sample"): every panel draws the sample's rows as if they were
// the data, and this module adds what stands for the rest —
//   - the density of every row, which frames bring now and then;
//   - brushing among every row on the server: Shift-drag a rectangle in a
//     latent view; the answer ("brushed") counts every row it holds and
//     lights the shown rows among them in every panel;
//   - every point: while the fit is paused, "every row" fetches every
//     row's hidden means in chunks ("points") and the latent views draw
//     them all (points.js), coloured as the page's colouring says
//     (the server sends each row's value of it; a new colouring fetches
//     every row again).
import { el, setText } from "../dom.js";
import { pointStats } from "./points.js";
import { canvasPoint } from "../../plot.js";

// createScale adds its button to the explorer's tools (tools) and its
// readout after the about line (about), and talks to the server through app;
// colourMode() is the page's colouring ("time", "ap:3", …); onBrushed(mask or null) hands a brush's
// shown rows (a Uint8Array over the page's rows) to the link.
export function createScale(tools, about, app, onBrushed, colourMode) {
  const btn = el("button", { type: "button", "data-testid": "explorer-all-points", hidden: "", title: "Fetch every row's hidden-layer means (the fit must be paused) and draw them all" }, "every row");
  const note = el("p", { class: "explorer-scale", "data-testid": "explorer-scale", "aria-live": "polite" });
  tools?.append(btn);
  about?.after(note);
  const st = { sample: null, density: [], points: null, loading: null, brushed: null, rect: null, key: "" };
  const fmt = (n) => n.toLocaleString("en");

  // every point is of one model: pause first, then ask once a frame says paused
  const ask = (index) => app.send({ op: "points", index, colour: st.loading.mode });
  const fetch = () => { st.loading.waiting = false; ask(0); };
  const start = () => {
    st.loading = { chunks: [], waiting: true, mode: colourMode() };
    setText(note, "fetching every row…");
    if (app.state.running) app.send({ op: "pause" }); else fetch();
  };
  btn.addEventListener("click", start);
  app.on("points", (m) => {
    const L = st.loading;
    if (!L) return;
    L.chunks.push(m);
    setText(note, `fetching every row: ${fmt(m.from + m.count)} of ${fmt(m.rows)}`);
    if (m.chunk + 1 < m.chunks) { ask(m.chunk + 1); return; }
    st.loading = null;
    st.points = join(L.chunks);
    Object.assign(st.points, { key: `${app.state.frame?.applied}|${m.iter}`, mode: L.mode });
    setText(note, `${fmt(m.rows)} rows drawn`);
  });
  app.on("brushed", (m) => {
    st.brushed = m;
    const mask = new Uint8Array(st.sample?.shown ?? 0);
    for (const k of m.shown) mask[k] = 1;
    setText(note, `brushed: ${fmt(m.count)} of ${fmt(st.sample?.rows ?? m.count)} rows (${fmt(m.count_test)} held out)${m.truncated ? `, the first ${fmt(m.ids.length)} listed` : ""}`);
    onBrushed(m.count ? mask : null);
  });
  app.on("error", (m) => { if (m.op === "points") { st.loading = null; setText(note, ""); } });

  return {
    get points() { return st.points; },
    get brushed() { return st.brushed; },
    drawn: pointStats,
    // brush asks for the rows of hidden layer li (from 0) whose means in
    // dims [a, b] lie in the polygon points (x₁, y₁, …; two: a rectangle).
    brush: (li, dims, points) => app.send({ op: "brush", layer: li, dims, points }),
    get rect() { return st.rect; },
    // setup keeps the setup's sample ({rows, shown}) or none.
    setup(setup) {
      const s = setup.view?.sample;
      st.sample = s ? { rows: s.n_train + s.n_test, shown: setup.view.n_all } : null;
      st.density = []; st.points = null; st.brushed = null;
      btn.hidden = !s;
      setText(note, s ? `Shift-drag in a latent view to brush among all ${fmt(st.sample.rows)} rows${btn.hidden ? "" : "; “every row” pauses and draws them all"}.` : "");
    },
    // intake keeps a frame's densities; every point stays only while the
    // model is the one they were fetched of.
    intake(f) {
      if (f.view?.density) st.density = f.view.density;
      if (st.loading?.waiting && !f.running) fetch();
      if (st.points && (f.running || `${f.applied}|${f.iter}` !== st.points.key)) { st.points = null; setText(note, ""); }
    },
    density: (li) => st.density.find((l) => l.layer === li) ?? null,
    // recolour fetches every row again with the colouring now chosen.
    recolour() { if (st.points && !st.loading && st.points.mode !== colourMode()) start(); },
    // wire makes Shift-drag on a latent view's canvas brush: proj() is its
    // last drawn pairs [{s, a, b}] (or null), li its layer.
    wire(cv, li, proj, redraw) {
      let d = null;
      cv.addEventListener("pointerdown", (e) => {
        if (!e.shiftKey || !st.sample) return;
        const [px, py] = canvasPoint(cv, e), p = proj()?.find(({ s }) => s.box.l <= px && px <= s.box.r && s.box.t <= py && py <= s.box.b);
        if (!p) return;
        e.stopImmediatePropagation(); e.preventDefault();
        cv.setPointerCapture(e.pointerId);
        d = { p, x0: px, y0: py };
        st.rect = { li, ...d, x1: px, y1: py };
      }, { capture: true });
      cv.addEventListener("pointermove", (e) => {
        if (!d) return;
        e.stopImmediatePropagation();
        const [px, py] = canvasPoint(cv, e);
        st.rect = { li, ...d, x1: px, y1: py };
        redraw();
      }, { capture: true });
      cv.addEventListener("pointerup", (e) => {
        if (!d) return;
        e.stopImmediatePropagation();
        const { s, a, b } = d.p, r = st.rect;
        d = null; st.rect = null;
        if (Math.abs(r.x1 - r.x0) < 3 && Math.abs(r.y1 - r.y0) < 3) { onBrushed(null); setText(note, ""); return; }
        app.send({ op: "brush", layer: li, dims: [a, b], points: [s.ix(r.x0), s.iy(r.y0), s.ix(r.x1), s.iy(r.y1)].map((v) => Math.max(-1000, Math.min(1000, v))) });
        redraw();
      }, { capture: true });
    },
  };
}

// join puts the chunks of every row's means together: {rows, layers:
// [{d, mean}], v (each row's value of the colouring)}.
function join(chunks) {
  const rows = chunks[0].rows, layers = chunks[0].layers.map((l) => ({ d: l.d, mean: new Float32Array(rows * l.d) }));
  const v = new Float32Array(rows);
  for (const c of chunks) {
    c.layers.forEach((l, i) => layers[i].mean.set(l.mean, c.from * layers[i].d));
    if (c.colour) v.set(c.colour, c.from);
  }
  return { rows, layers, v };
}
