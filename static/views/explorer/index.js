// The latent explorer (issue 23): every hidden layer's message means as
// pairwise projections or a 3-D view to turn (latent.js), one output with
// its posterior band (output.js), the penalties per row (penalties.js),
// the restarts (restarts.js) and the numbers in words (readout.js); where
// the data carry ground truth, the true path and the revisits (truth.js);
// where they carry a test split, the held-out rows; where they have more
// rows than a frame carries, a sample of them over the density of all,
// brushing among all on the server and every row on request (scale.js).
// Which optional things the data carry is asked in one place (../data.js).
//
// This module mounts the panels, keeps the explorer's own state (the
// colouring, the toggles, the last analysis) and links the panels: each
// panel keeps its own state; they share only the colour scale (colour.js:
// a colour means the same value everywhere) and the selection (link.js: a
// brushed time range and a hovered row), both passed to every draw. A
// panel changes the selection through the link it is given.
//
// Drawing: the app draws at most once per animation frame or frame
// received; the latent views draw with every frame, the others only when
// what they show changed. Each panel copies its static layer (layer.js)
// and draws its marks over it as Canvas 2D paths batched by colour
// (marks.js). Each panel's drawing time is a performance measure
// ("explorer-latent", …, and "explorer-draw" for all).
import { register } from "../../panels/registry.js";
import { setText } from "../dom.js";
import { describe, analysis, viewOf } from "../data.js";
import { colourBy, colourModes } from "../colour.js";
import { layerPaints } from "../layer.js";
import { selection } from "./link.js";
import { createLatent } from "./latent.js";
import { createTruth } from "./truth.js";
import { createOutput } from "./output.js";
import { createPenalties } from "./penalties.js";
import { createRestarts } from "./restarts.js";
import { readout } from "./readout.js";
import { wireExport } from "./export.js";
import { createScale } from "./scale.js";

register("explorer", (root, app) => {
  const q = (id) => root.querySelector(`[data-testid="${id}"]`);
  const body = root.querySelector(".explorer-body");
  const showRev = q("explorer-show-revisits"), showTest = q("explorer-show-test"), colourSel = q("explorer-colour");
  const st = {
    dataId: -1, data: null, views: null,
    colour: "time", showRevisits: true, showTest: true,
    sel: selection(), mask: null, // mask: the rows a brush in a latent view lit (scale.js)
    fit: { count: 0, out: null, outVar: null, test: null, testVar: null }, // the last analysis's output layer
    testHidden: null, testKey: 0, // the hidden layers' messages at the held-out rows, from the last analysis
    lastFrame: null, stats: { draws: 0, frames: 0, missed: 0, lastSeq: -1 },
  };
  // The link: the selection, and how panels change it. A hovered row lights
  // up with the rows it revisits while the revisits are shown.
  const partners = () => (st.showRevisits && st.data?.truth ? st.data.truth.partners : null);
  const setSel = (lo, hi, hover) => {
    st.sel = selection(lo, hi, hover, partners(), st.mask);
    app.redraw();
  };
  const link = {
    get sel() { return st.sel; },
    select: (lo, hi) => { st.mask = null; setSel(lo, hi, st.sel.hover); },
    hoverAt: (i) => setSel(st.sel.lo, st.sel.hi, i),
  };
  const scale = createScale(root.querySelector(".panel-tools"), q("explorer-about"), app, (mask) => { st.mask = mask; setSel(-1, -1, st.sel.hover); }, () => st.colour);
  const env = { send: (cmd) => app.send(cmd), redraw: () => app.redraw(), link, scale };
  const restarts = createRestarts(root, env.send);
  wireExport(root, () => app.state.figureKey, () => [st.views?.latent[0]?.cv, st.views?.latent[1]?.cv, st.views?.truth?.cv]);
  showRev?.addEventListener("change", () => { st.showRevisits = showRev.checked; setSel(st.sel.lo, st.sel.hi, st.sel.hover); });
  showTest?.addEventListener("change", () => { st.showTest = showTest.checked; app.redraw(); });
  colourSel?.addEventListener("change", () => { st.colour = colourSel.value; scale.recolour(); app.redraw(); });

  // mount makes the panels for new data.
  function mount(data) {
    const latent = [createLatent(0, env), createLatent(1, env)];
    const truth = data.truth?.p > 1 ? createTruth(data.truth, env) : null;
    st.views = { latent, truth, output: createOutput(data, env), penalties: createPenalties(data, env) };
    body.replaceChildren(latent[0].root, ...(truth ? [truth.root] : []), latent[1].root, st.views.output.root, st.views.penalties.root);
    if (colourSel) {
      colourSel.replaceChildren(...colourModes(data).map((c) => new Option(c.label, c.value)));
      colourSel.value = st.colour = "time";
    }
    showRev?.closest("label")?.toggleAttribute("hidden", !data.truth);
    showTest?.closest("label")?.toggleAttribute("hidden", !data.test);
    setText(q("explorer-show-test-label"), `held-out ${data.row.many}`); // the data's word, as the views' titles
    st.fit = { count: 0, out: null, outVar: null, test: null, testVar: null };
    st.testHidden = null;
    st.mask = null;
    st.sel = selection(-1, -1, -1, partners());
    scale.setup(app.state.setup);
  }
  // ensureLatent adds a view for each hidden layer beyond the first two.
  function ensureLatent(nh) {
    const L = st.views.latent;
    while (L.length < nh) {
      const v = createLatent(L.length, env);
      L[L.length - 1].root.after(v.root);
      L.push(v);
    }
  }
  // intake keeps what a frame's analysis brings (the output layer and the
  // held-out rows come only with a new analysis) and counts the frames.
  function intake(f, a) {
    const last = f.layers[f.layers.length - 1];
    const fit = { ...st.fit };
    if (a?.newOutput && last.mean) Object.assign(fit, { count: fit.count + 1, out: last.mean, outVar: last.var });
    if (a?.test) { Object.assign(fit, { test: a.test.mean, testVar: a.test.var }); st.testHidden = a.testHidden; st.testKey++; }
    st.fit = fit;
    const s = st.stats;
    if (s.lastSeq >= 0 && f.seq > s.lastSeq + 1) s.missed += f.seq - s.lastSeq - 1;
    s.lastSeq = f.seq; s.frames++;
    scale.intake(f);
  }

  const views = () => st.views;
  return {
    // for tests and tours (window.dgpviz.panels.explorer)
    select(lo, hi) { link.select(lo, hi); },
    clear() { setSel(-1, -1, -1); },
    get sel() { return { lo: st.sel.lo, hi: st.sel.hi, hover: st.sel.hover }; },
    hover(i) { link.hoverAt(i); },
    revisitsOf: (i) => st.data?.truth?.partners(i).slice() ?? [],
    // colourBy sets the colouring ("time", "x", "y" or "ap:J").
    colourBy(mode) { st.colour = mode; if (colourSel) colourSel.value = mode; scale.recolour(); app.redraw(); },
    // colourBin is row i's colour bin (0…23) on the current scale.
    colourBin: (i) => colourBy(st.data, st.colour).bin[i],
    view3d: (li, on) => views().latent[li].view3d(on),
    turn3d: (li, yaw, pitch, zoom) => views().latent[li].turn3d(yaw, pitch, zoom),
    // screen is row i's place, in CSS pixels of a view's canvas, as last
    // drawn ("latent-0", "latent-1", "path").
    screen(key, i) {
      const v = key === "path" ? views()?.truth : views()?.latent[Number(key.slice(7))];
      return v?.screen(i) ?? null;
    },
    stats: st.stats,
    scale,
    layerPaints,
    draw(state) {
      const on = viewOf(state.setup) === "explorer";
      document.body.classList.toggle("explorer-mode", on);
      root.hidden = !on;
      if (!on) { st.dataId = -1; return; }
      st.data = describe(state.setup);
      if (st.dataId !== state.setup.data_id) { st.dataId = state.setup.data_id; mount(st.data); }
      const f = state.frame;
      if (!f || f.layers.length < 2) return;
      performance.mark("explorer-draw-start");
      const a = analysis(f);
      if (f !== st.lastFrame) intake(f, a);
      st.lastFrame = f;
      ensureLatent(f.layers.length - 1);
      const data = st.data, v = st.views;
      const m = {
        frame: f, data, dataKey: st.dataId, colour: colourBy(data, st.colour), byTime: st.colour === "time", sel: st.sel,
        revisits: st.showRevisits, testHidden: st.showTest ? st.testHidden : null, testKey: st.testKey, scores: a?.scores, collapsed: a?.collapsed, fit: st.fit,
      };
      // each panel's drawing time, as performance measures "explorer-<panel>"
      let t = performance.now();
      const lap = (name) => { const t1 = performance.now(); performance.measure(`explorer-${name}`, { start: t, end: t1 }); t = t1; };
      for (const l of v.latent) l.draw(m);
      lap("latent");
      v.truth?.draw(m);
      lap("truth");
      v.output.draw(m);
      lap("output");
      v.penalties.draw(m);
      lap("penalties");
      readout(root, data, a);
      restarts.draw(a?.restarts ?? null);
      performance.measure("explorer-draw", "explorer-draw-start");
      st.stats.draws++;
    },
  };
});
