// The autoencoder view (issue 23): for data whose outputs are its inputs,
// the latent map (map.js) with decoded tiles (tiles.js), the output under
// the cursor and a hovered row beside its reconstruction (faces.js), and a
// strip of the rows in order that lights up a stretch of them (strip.js).
// Outputs are drawn as images where the data have an image shape, else as
// profiles (picture.js); which optional things the data carry is asked in
// one place (../data.js). Images never come with frames: the view asks for
// them with the "decode" op (decode.js).
//
// This module mounts the panels on the elements of web/frey.templ, keeps
// what they share — the cursor, the hovered row and the lit stretch — and
// passes it to every draw; the panels change it through the setters they
// are given.
import { register } from "../../panels/registry.js";
import { describe, viewOf } from "../data.js";
import { ColourScale } from "../colour.js";
import { createDecoder } from "./decode.js";
import { createMap } from "./map.js";
import { createTiles } from "./tiles.js";
import { createFaces } from "./faces.js";
import { createStrip } from "./strip.js";

register("autoencoder", (root, app) => {
  const q = (id) => root.querySelector(`[data-testid="${id}"]`);
  const st = {
    dataId: -1, data: null, colour: null,
    cursor: null, hover: -1, from: -1, to: -1, // shared by the panels
    stats: { decoded: 0, draws: 0 }, lastIter: -1,
  };
  let tiles = null, faces = null; // per data
  const env = {
    send: (cmd) => app.send(cmd),
    redraw: () => app.redraw(),
    running: () => app.state.running,
    setCursor(x, y) { st.cursor = { x, y }; pump(); app.redraw(); },
    setHover(i) { st.hover = i; app.redraw(); },
    setRange,
  };
  const map = createMap(q("autoencoder-map"), env);
  const decoder = createDecoder(app, (kind, m) => {
    st.stats.decoded++;
    if (kind === "tiles") tiles?.answer(m); else faces?.answer(kind, m);
    app.redraw();
    pump();
  });
  let strip = null;

  // ---- the lit stretch: typed in, or dragged along the strip ----
  const fromIn = q("autoencoder-from"), toIn = q("autoencoder-to");
  function setRange(a, b) {
    const n = st.data?.n ?? 0;
    if (!(n > 0)) return;
    a = Math.max(0, Math.min(n - 1, Math.round(a))); b = Math.max(0, Math.min(n - 1, Math.round(b)));
    if (b < a) [a, b] = [b, a];
    st.from = a; st.to = b;
    fromIn.value = String(a + 1); toIn.value = String(b + 1); // counted from 1, as a person reads them
    app.redraw();
  }
  function clearRange() {
    st.from = st.to = -1;
    fromIn.value = "1"; toIn.value = String(Math.max(1, st.data?.n ?? 1));
    app.redraw();
  }
  fromIn.addEventListener("change", () => setRange(Number(fromIn.value) - 1, st.to < 0 ? Number(fromIn.value) + 49 : st.to));
  toIn.addEventListener("change", () => setRange(st.from < 0 ? 0 : st.from, Number(toIn.value) - 1));
  q("autoencoder-clear").addEventListener("click", clearRange);
  const tilesBox = q("autoencoder-tiles"), gridSel = q("autoencoder-grid");
  tilesBox.addEventListener("change", () => { if (tiles) { tiles.on = tilesBox.checked; tiles.forget(); } app.redraw(); });
  gridSel.addEventListener("change", () => { if (tiles) { tiles.grid = Number(gridSel.value); tiles.forget(); } app.redraw(); });

  // ---- the server's figure and the latent CSV ----
  for (const a of root.querySelectorAll(".autoencoder-figure-links a")) {
    a.addEventListener("click", (ev) => {
      const key = app.state.figureKey;
      if (!key) { ev.preventDefault(); return; }
      const grid = a.dataset.format === "csv" ? "" : `&grid=${tiles?.grid ?? 7}`; // the CSV has no tiles
      a.href = `/figure/faces.${a.dataset.format}?session=${encodeURIComponent(key)}${grid}`;
      a.download = `dgpviz-autoencoder-latent.${a.dataset.format}`;
    });
  }

  // pump asks for what the panels want and is not in flight: the output
  // under the cursor, the hovered row, the tiles.
  function pump() {
    const f = app.state.frame;
    if (!f || !faces) return;
    const iter = f.iter;
    let want;
    if (!decoder.busy("cursor") && (want = faces.wantCursor(st.cursor, iter))) decoder.ask("cursor", want);
    if (!decoder.busy("frame") && (want = faces.wantFrame(st.hover, iter))) decoder.ask("frame", want);
    const r = map.ranges();
    if (!decoder.busy("tiles") && r && (want = tiles.want(r.xr, r.yr, iter))) decoder.ask("tiles", { points: want });
  }

  // mount starts afresh for new data.
  function mount(data) {
    st.data = data;
    // Rows are numbered from 1, as a person counts them.
    st.colour = new ColourScale(Float64Array.from({ length: data.n }, (_, i) => i + 1), { bins: 32, title: `${data.row.one} number` });
    const cap = (w) => w[0].toUpperCase() + w.slice(1);
    q("autoencoder-rows-word").textContent = cap(data.row.many);
    q("autoencoder-row-caption").textContent = `the ${data.row.one}`;
    q("autoencoder-clear").textContent = `all ${data.row.many}`;
    tiles = createTiles(data); tiles.on = tilesBox.checked; tiles.grid = Number(gridSel.value);
    faces = createFaces(q, data);
    strip = createStrip(q("autoencoder-strip"), data, env);
    st.cursor = null; st.hover = -1;
    decoder.reset(); map.reset();
    fromIn.min = toIn.min = "1";
    fromIn.max = toIn.max = String(data.n);
    clearRange();
  }

  return {
    // for tests and tours (window.dgpviz.panels.autoencoder)
    stats: st.stats,
    screen: (x, y) => map.screen(x, y),
    handle: (j) => map.handle(j),
    range(a, b) { if (a >= 0) setRange(a, b); else clearRange(); },
    get lit() { return { from: st.from, to: st.to }; },
    draw(state) {
      const on = viewOf(state.setup) === "autoencoder";
      document.body.classList.toggle("autoencoder-mode", on);
      root.hidden = !on;
      if (!on) { st.dataId = -1; return; }
      if (st.dataId !== state.setup.data_id) { st.dataId = state.setup.data_id; mount(describe(state.setup)); }
      const f = state.frame;
      if (!f) return;
      performance.mark("autoencoder-draw-start");
      const lit = { from: st.from, to: st.to }, n = st.data.n;
      map.draw({ frame: f, n, colour: st.colour, lit, hover: st.hover, cursor: st.cursor, tiles });
      strip.draw({ n, lit, hover: st.hover });
      performance.measure("autoencoder-draw", "autoencoder-draw-start");
      st.stats.draws++;
      if (f.iter !== st.lastIter || tiles.missing()) { st.lastIter = f.iter; pump(); }
    },
  };
});
