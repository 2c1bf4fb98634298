// Frey faces view (issue 12). Shown when the setup carries a "frey"
// section: the autoencoder's 2-D latent space — one point per frame at its
// latent message mean, coloured by frame index (viridis, with a colour bar
// "frame in the video"), its variance as a halo — with face tiles decoded
// on a grid, the decoder's inducing inputs as draggable diamonds (the
// "move" op, as in the layer panels), a latent cursor whose decoded face
// and predictive sd update live, a hovered frame beside its reconstruction
// and a frame-range strip that lights up a stretch of the video.
//
// Images never come with frames: the panel asks for them with the
// "decode" op (docs/protocol.md, "Frey faces") and draws the binary
// "decoded" answers. One request of each kind (cursor, frame, tiles) is
// in flight at a time; a newer wish waits for the answer.
import { register } from "./registry.js";
import { Plot, StickyRange, fmt, canvasPoint, getDrawScale } from "../plot.js";
import { palette, viridis } from "../colormap.js";

const NB = 32; // colour bins for batched drawing
const SD_MAX = 40; // grey levels: the sd image's top colour
const TILE_EVERY = 600; // ms between tile refreshes while the model changes

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...kids);
  return e;
}

// greyImage fills a w×h canvas with grey levels lo…hi (clamped) from px
// (row-major, w·h values starting at off).
function paintGrey(cv, px, off, w, h, lo, hi) {
  if (cv.width !== w || cv.height !== h) { cv.width = w; cv.height = h; }
  const c = cv.getContext("2d"), img = c.createImageData(w, h), d = img.data;
  for (let k = 0; k < w * h; k++) {
    const g = Math.round(255 * Math.min(1, Math.max(0, (px[off + k] - lo) / (hi - lo))));
    d[4 * k] = d[4 * k + 1] = d[4 * k + 2] = Number.isFinite(g) ? g : 0; d[4 * k + 3] = 255;
  }
  c.putImageData(img, 0, 0);
}

// paintSD fills a canvas with the predictive sd (from variances) on the
// viridis map, 0 … SD_MAX grey levels.
function paintSD(cv, vr, off, w, h) {
  if (cv.width !== w || cv.height !== h) { cv.width = w; cv.height = h; }
  const c = cv.getContext("2d"), img = c.createImageData(w, h), d = img.data;
  for (let k = 0; k < w * h; k++) {
    const [r, g, b] = viridis(Math.sqrt(Math.max(0, vr[off + k])) / SD_MAX);
    d[4 * k] = r; d[4 * k + 1] = g; d[4 * k + 2] = b; d[4 * k + 3] = 255;
  }
  c.putImageData(img, 0, 0);
}

// bigBar is colorBar with labels large enough for the back of a hall.
function bigBar(ctx, x, y, w, h, lo, hi, title) {
  const g = ctx.createLinearGradient(x, 0, x + w, 0);
  for (let k = 0; k <= 15; k++) { const c = viridis(k / 15); g.addColorStop(k / 15, `rgb(${c.join(",")})`); }
  ctx.fillStyle = g; ctx.fillRect(x, y, w, h);
  ctx.strokeStyle = "rgba(0,0,0,0.25)"; ctx.strokeRect(x + 0.5, y + 0.5, w - 1, h - 1);
  ctx.font = "13px system-ui, sans-serif"; ctx.fillStyle = "#1f2933"; ctx.textBaseline = "top";
  ctx.textAlign = "left"; ctx.fillText(lo, x, y + h + 3);
  ctx.textAlign = "right"; ctx.fillText(hi, x + w, y + h + 3);
  ctx.font = "600 13px system-ui, sans-serif"; ctx.textAlign = "center"; ctx.fillText(title, x + w / 2, y + h + 3);
  ctx.font = "12px system-ui, sans-serif";
}

register("frey", (root, app) => {
  const q = (id) => root.querySelector(`[data-testid="${id}"]`);
  const mapCv = q("frey-map"), stripCv = q("frey-strip");
  const plot = new Plot(mapCv, { l: 62, r: 14, t: 10, b: 74 });
  const strip = new Plot(stripCv, { l: 62, r: 14, t: 4, b: 16 });
  const xr = new StickyRange(), yr = new StickyRange();
  const st = {
    dataId: -1, n: 0,
    tilesOn: true, grid: 7,
    tiles: null, // {g, k, pts, mean, key, iter}: the last decoded tiles
    tileImgs: [], // offscreen canvases, one per tile
    tileAsked: 0, // time of the last tile request
    cursor: null, // {x, y}: latent position under the cursor
    cursorFace: null, // {x, y, iter}: what the cursor images show
    hover: -1, // frame under the pointer
    frameShown: -1, frameIter: -1,
    from: -1, to: -1, // the lit stretch of the video (−1: none)
    drag: null, // {index, z0, z, wasRunning}
    pendingMove: null, moveScheduled: false,
    inflight: { cursor: 0, frame: 0, tiles: 0 },
    scale: null, lastIter: -1,
    stats: { decoded: 0, draws: 0 },
  };
  const tilesBox = q("frey-tiles"), gridSel = q("frey-grid");
  tilesBox.addEventListener("change", () => { st.tilesOn = tilesBox.checked; st.tiles = null; app.redraw(); });
  gridSel.addEventListener("change", () => { st.grid = Number(gridSel.value); st.tiles = null; app.redraw(); });
  const fromIn = q("frey-from"), toIn = q("frey-to");
  const setRange = (a, b) => {
    if (!(st.n > 0)) return;
    a = Math.max(0, Math.min(st.n - 1, Math.round(a))); b = Math.max(0, Math.min(st.n - 1, Math.round(b)));
    if (b < a) [a, b] = [b, a];
    st.from = a; st.to = b;
    fromIn.value = String(a); toIn.value = String(b);
    app.redraw();
  };
  fromIn.addEventListener("change", () => setRange(Number(fromIn.value), st.to < 0 ? Number(fromIn.value) + 50 : st.to));
  toIn.addEventListener("change", () => setRange(st.from < 0 ? 0 : st.from, Number(toIn.value)));
  q("frey-clear").addEventListener("click", () => { st.from = st.to = -1; fromIn.value = "0"; toIn.value = String(Math.max(0, st.n - 1)); app.redraw(); });

  // ---- decode requests and answers ----
  const ids = new Map(); // request id → kind
  const LOST = 4000; // ms: a request unanswered this long (a reconnect) is forgotten
  const asked = { cursor: 0, frame: 0, tiles: 0 };
  function ask(kind, cmd) {
    const id = app.send({ op: "decode", ...cmd });
    if (id) { ids.set(id, kind); st.inflight[kind] = id; asked[kind] = performance.now(); }
    return id;
  }
  function busy(kind) {
    if (st.inflight[kind] && performance.now() - asked[kind] > LOST) { ids.delete(st.inflight[kind]); st.inflight[kind] = 0; }
    return st.inflight[kind] !== 0;
  }
  // A refused decode (its error reply is shown as a toast) frees its kind.
  app.on("error", (m) => {
    const kind = m.op === "decode" && ids.get(m.id);
    if (!kind) return;
    ids.delete(m.id);
    if (st.inflight[kind] === m.id) st.inflight[kind] = 0;
  });
  app.on("decoded", (m) => {
    const kind = ids.get(m.id);
    if (!kind) return;
    ids.delete(m.id);
    if (st.inflight[kind] === m.id) st.inflight[kind] = 0;
    st.stats.decoded++;
    const S = app.state.setup?.frey;
    if (!S) return;
    const w = m.width, h = m.height, d = m.d;
    if (kind === "cursor" && m.g === 1) {
      paintGrey(q("frey-cursor-mean"), m.mean, 0, w, h, S.lo, S.hi);
      paintSD(q("frey-cursor-var"), m.var, 0, w, h);
      let s = 0;
      for (let k = 0; k < d; k++) s += Math.sqrt(Math.max(0, m.var[k]));
      st.cursorFace = { x: m.points[0], y: m.points[1], iter: m.iter };
      const at = q("frey-cursor-at");
      at.textContent = `latent (${fmt(m.points[0])}, ${fmt(m.points[1])}) · mean sd ${fmt(s / d)} grey levels`;
      at.dataset.iter = String(m.iter);
      q("frey-cursor-mean").dataset.at = `${m.points[0]},${m.points[1]}`;
    } else if (kind === "frame" && m.frames.length === 1) {
      const i = m.frames[0];
      paintGrey(q("frey-frame-orig"), m.original, 0, w, h, S.lo, S.hi);
      paintGrey(q("frey-frame-recon"), m.recon_mean, 0, w, h, S.lo, S.hi);
      let e = 0;
      for (let k = 0; k < d; k++) e += (m.recon_mean[k] - m.original[k]) ** 2;
      st.frameShown = i; st.frameIter = m.iter;
      q("frey-frame-title").textContent = `Frame ${i} of ${st.n}`;
      q("frey-frame-at").textContent = `reconstruction error ${fmt(Math.sqrt(e / d))} grey levels RMS`;
      q("frey-frame-orig").dataset.frame = String(i);
    } else if (kind === "tiles") {
      st.tiles = { ...st.tilesWant, count: m.g, iter: m.iter };
      st.tileImgs = [];
      for (let t = 0; t < m.g; t++) {
        const cv = document.createElement("canvas");
        paintGrey(cv, m.mean, t * d, w, h, S.lo, S.hi);
        st.tileImgs.push(cv);
      }
    }
    app.redraw();
    pump();
  });

  // pump sends what the view wants and is not in flight: the face under
  // the cursor (again when the model changed), the hovered frame, tiles.
  function pump() {
    const f = app.state.frame;
    if (!f || !app.state.setup?.frey) return;
    const iter = f.iter;
    if (!busy("cursor") && st.cursor) {
      const c = st.cursorFace;
      if (!c || c.x !== st.cursor.x || c.y !== st.cursor.y || c.iter !== iter) ask("cursor", { points: [st.cursor.x, st.cursor.y] });
    }
    if (!busy("frame") && st.hover >= 0 && (st.frameShown !== st.hover || st.frameIter !== iter)) ask("frame", { frames: [st.hover] });
    if (!busy("tiles") && st.tilesOn && st.scale) {
      const now = performance.now();
      const want = tileGrid();
      const stale = !st.tiles || st.tiles.key !== want.key || (st.tiles.iter !== iter && now - st.tileAsked > TILE_EVERY);
      if (stale) { st.tileAsked = now; st.tilesWant = want; ask("tiles", { points: want.pts }); }
    }
  }

  // tileGrid: grid × grid latent positions over the frames' range (the
  // centres of equal cells, as faces.Grid and the paper's figure); the key
  // changes when the grid moves noticeably.
  function tileGrid() {
    const g = st.grid, pts = [];
    const x0 = xr.lo, x1 = xr.hi, y0 = yr.lo, y1 = yr.hi;
    for (let r = 0; r < g; r++) for (let c = 0; c < g; c++) pts.push(x0 + ((c + 0.5) * (x1 - x0)) / g, y0 + ((r + 0.5) * (y1 - y0)) / g);
    const round = (v) => v.toPrecision(2);
    return { pts, grid: g, x0, x1, y0, y1, key: `${g}|${round(x0)}|${round(x1)}|${round(y0)}|${round(y1)}` };
  }

  // ---- pointer: cursor, hover, drag of inducing inputs ----
  const pos = (ev) => canvasPoint(mapCv, ev); // in drawing units (the presentation scale)
  function handleAt(px, py) {
    const f = app.state.frame, s = st.scale;
    if (!f || !s) return -1;
    const L = f.layers[f.layers.length - 1];
    if (!L || L.q !== 2 || !L.z?.length) return -1;
    let best = -1, bd = 9 * 9;
    for (let j = 0; j < L.m; j++) {
      const dx = s.sx(L.z[2 * j]) - px, dy = s.sy(L.z[2 * j + 1]) - py, d2 = dx * dx + dy * dy;
      if (d2 < bd) { bd = d2; best = j; }
    }
    return best;
  }
  function pointAt(px, py) {
    const f = app.state.frame, s = st.scale;
    if (!f || !s || !f.layers[0].mean) return -1;
    const mean = f.layers[0].mean, n = st.n, dq = f.layers[0].d;
    let best = -1, bd = 5 * 5;
    for (let i = 0; i < n; i++) {
      if (st.from >= 0 && (i < st.from || i > st.to)) continue;
      const dx = s.sx(mean[i * dq]) - px, dy = s.sy(mean[i * dq + 1]) - py, d2 = dx * dx + dy * dy;
      if (d2 < bd) { bd = d2; best = i; }
    }
    return best;
  }
  const inBox = (px, py) => st.scale && px >= st.scale.box.l && px <= st.scale.box.r && py >= st.scale.box.t && py <= st.scale.box.b;
  function setCursor(px, py) {
    if (!inBox(px, py)) return;
    st.cursor = { x: st.scale.ix(px), y: st.scale.iy(py) };
    pump();
    app.redraw();
  }
  let pressing = false;
  mapCv.addEventListener("pointerdown", (ev) => {
    const [px, py] = pos(ev);
    const k = handleAt(px, py);
    mapCv.setPointerCapture(ev.pointerId);
    if (k >= 0) {
      const L = app.state.frame.layers[app.state.frame.layers.length - 1];
      st.drag = { index: k, z0: [L.z[2 * k], L.z[2 * k + 1]], z: [L.z[2 * k], L.z[2 * k + 1]], off: [L.z[2 * k] - st.scale.ix(px), L.z[2 * k + 1] - st.scale.iy(py)], wasRunning: app.state.running };
      if (st.drag.wasRunning) app.send({ op: "pause" });
      return;
    }
    pressing = true;
    setCursor(px, py);
  });
  function flushMove() {
    st.moveScheduled = false;
    if (st.pendingMove) { app.send(st.pendingMove); st.pendingMove = null; }
  }
  mapCv.addEventListener("pointermove", (ev) => {
    const [px, py] = pos(ev);
    if (st.drag) {
      const d = st.drag, li = app.state.frame.layers.length - 1;
      d.z = [st.scale.ix(px) + d.off[0], st.scale.iy(py) + d.off[1]];
      st.pendingMove = { op: "move", layer: li, index: d.index, z: d.z };
      if (!st.moveScheduled) { st.moveScheduled = true; requestAnimationFrame(flushMove); }
      app.redraw();
      return;
    }
    const k = handleAt(px, py);
    mapCv.style.cursor = k >= 0 ? "grab" : "crosshair";
    mapCv.title = k >= 0 ? `Decoder inducing input ${k + 1}: drag to move it (the function stays; watch the bound)` : "";
    const i = pointAt(px, py);
    if (i !== st.hover) { st.hover = i; mapCv.dataset.hover = String(i); }
    setCursor(px, py);
  });
  const endDrag = () => {
    pressing = false;
    if (!st.drag) return;
    flushMove();
    const was = st.drag.wasRunning;
    st.drag = null;
    if (was) app.send({ op: "play" });
    app.redraw();
  };
  mapCv.addEventListener("pointerup", endDrag);
  mapCv.addEventListener("pointercancel", endDrag);
  mapCv.addEventListener("pointerleave", () => { if (!pressing && st.hover >= 0) { st.hover = -1; app.redraw(); } });

  // The strip: drag along it to light up a stretch of the video.
  let brushing = null;
  stripCv.addEventListener("pointerdown", (ev) => {
    const s = st.stripScale;
    if (!s) return;
    stripCv.setPointerCapture(ev.pointerId);
    const i = s.ix(canvasPoint(stripCv, ev)[0]);
    brushing = i;
    setRange(i, i);
  });
  stripCv.addEventListener("pointermove", (ev) => {
    if (brushing === null) return;
    setRange(brushing, st.stripScale.ix(canvasPoint(stripCv, ev)[0]));
  });
  stripCv.addEventListener("pointerup", () => { brushing = null; });

  // ---- export: the server's gonum/plot figure and the latent CSV ----
  for (const a of root.querySelectorAll(".frey-figure-links a")) {
    a.addEventListener("click", (ev) => {
      const key = app.state.figureKey;
      if (!key) { ev.preventDefault(); return; }
      const fmtx = a.dataset.format;
      a.href = `/figure/faces.${fmtx}?session=${encodeURIComponent(key)}&grid=${st.grid}`;
      a.download = `dgpviz-frey-latent.${fmtx}`;
    });
  }

  // ---- drawing ----
  function drawMap(f) {
    if (!plot.begin()) return;
    const L0 = f.layers[0], dq = L0.d, n = st.n, mean = L0.mean, vr = L0.var;
    const dec = f.layers[f.layers.length - 1];
    const ctx = plot.ctx;
    if (!mean || dq < 2) {
      ctx.fillStyle = "#5f6b7a"; ctx.fillText(dq < 2 ? "The latent map needs a hidden layer of width 2 or more." : "waiting for the model…", 60, 30);
      return;
    }
    let xa = Infinity, xb = -Infinity, ya = Infinity, yb = -Infinity;
    for (let i = 0; i < n; i++) {
      const x = mean[i * dq], y = mean[i * dq + 1];
      if (x < xa) xa = x; if (x > xb) xb = x; if (y < ya) ya = y; if (y > yb) yb = y;
    }
    if (dec.q === 2 && dec.z?.length) for (let j = 0; j < dec.m; j++) {
      xa = Math.min(xa, dec.z[2 * j]); xb = Math.max(xb, dec.z[2 * j]); ya = Math.min(ya, dec.z[2 * j + 1]); yb = Math.max(yb, dec.z[2 * j + 1]);
    }
    const px = 0.06 * (xb - xa || 1), py = 0.06 * (yb - ya || 1);
    xr.update(xa - px, xb + px, !!st.drag); yr.update(ya - py, yb + py, !!st.drag);
    const { w, h } = plot;
    const s = plot.area(xr.lo, xr.hi, yr.lo, yr.hi, { l: plot.m.l, r: w - plot.m.r, t: plot.m.t, b: h - plot.m.b }, { equal: true });
    st.scale = s;
    plot.axes({ xlabel: "", ylabel: "latent dimension 2", xgrid: false, ygrid: false });
    ctx.fillStyle = "#1f2933"; ctx.textAlign = "center"; ctx.textBaseline = "top";
    ctx.fillText("latent dimension 1", (s.box.l + s.box.r) / 2, s.box.b + 20);
    const lit = (i) => st.from < 0 || (i >= st.from && i <= st.to);
    const any = st.from >= 0;
    plot.clip((c) => {
      // halos: ±2 sd of each frame's message (mean of the two dimensions' variances)
      c.fillStyle = "rgba(120,130,150,0.07)";
      c.beginPath();
      for (let i = 0; i < n; i++) {
        if (!lit(i)) continue;
        const r = 2 * Math.sqrt(Math.max(0, (vr[i * dq] + vr[i * dq + 1]) / 2)) * (s.sx(1) - s.sx(0));
        if (!(r > 2.5)) continue;
        const x = s.sx(mean[i * dq]), y = s.sy(mean[i * dq + 1]);
        c.moveTo(x + r, y); c.arc(x, y, Math.min(r, 60), 0, 6.2832);
      }
      c.fill();
      // face tiles, under the points, slightly transparent
      const T = st.tiles;
      const drawn = st.tilesOn && T && st.tileImgs.length === T.count;
      mapCv.dataset.tiles = String(drawn ? T.count : 0); // tiles on the map now
      if (drawn) {
        const g = T.grid;
        const cw = Math.abs(s.sx(T.x1) - s.sx(T.x0)) / g, ch = Math.abs(s.sy(T.y1) - s.sy(T.y0)) / g;
        const th = Math.min(ch * 0.94, (cw * 0.94 * 28) / 20), tw = (th * 20) / 28;
        c.globalAlpha = any ? 0.45 : 0.88;
        c.imageSmoothingEnabled = tw > 40;
        for (let t = 0; t < T.count; t++) {
          const x = s.sx(T.pts[2 * t]), y = s.sy(T.pts[2 * t + 1]);
          c.drawImage(st.tileImgs[t], x - tw / 2, y - th / 2, tw, th);
        }
        c.globalAlpha = 1;
      }
      // the stretch of the video in order, as a line
      if (any) {
        c.strokeStyle = "rgba(17,24,39,0.55)"; c.lineWidth = 1; c.beginPath();
        for (let i = st.from; i <= st.to; i++) c.lineTo(s.sx(mean[i * dq]), s.sy(mean[i * dq + 1]));
        c.stroke();
      }
      // points, batched by colour bin
      // large enough to see from the back of a hall, smaller when the frames are many
      const pal = palette(NB, 1), rad = (any ? 1.3 : 1) * (n > 500 ? 2.8 : 3.6);
      for (let b = 0; b < NB; b++) {
        c.beginPath();
        for (let i = 0; i < n; i++) {
          if (!lit(i) || Math.min(NB - 1, Math.floor((i / Math.max(1, n - 1)) * NB)) !== b) continue;
          const x = s.sx(mean[i * dq]), y = s.sy(mean[i * dq + 1]);
          c.moveTo(x + rad, y); c.arc(x, y, rad, 0, 6.2832);
        }
        c.fillStyle = pal[b]; c.fill();
      }
      if (any) {
        c.beginPath();
        for (let i = 0; i < n; i++) if (!lit(i)) { const x = s.sx(mean[i * dq]), y = s.sy(mean[i * dq + 1]); c.moveTo(x + 1.6, y); c.arc(x, y, 1.6, 0, 6.2832); }
        c.fillStyle = "rgba(148,163,184,0.55)"; c.fill();
      }
      // the hovered frame
      if (st.hover >= 0 && st.hover < n) {
        const x = s.sx(mean[st.hover * dq]), y = s.sy(mean[st.hover * dq + 1]);
        c.strokeStyle = "#111827"; c.lineWidth = 2; c.beginPath(); c.arc(x, y, 6, 0, 6.2832); c.stroke();
      }
      // the decoder's inducing inputs
      if (dec.q === 2 && dec.z?.length) {
        for (let j = 0; j < dec.m; j++) {
          let zx = dec.z[2 * j], zy = dec.z[2 * j + 1];
          const hot = st.drag && st.drag.index === j;
          if (hot) [zx, zy] = st.drag.z;
          const x = s.sx(zx), y = s.sy(zy), r = hot ? 8 : 6.5;
          c.beginPath(); c.moveTo(x, y - r); c.lineTo(x + r, y); c.lineTo(x, y + r); c.lineTo(x - r, y); c.closePath();
          c.fillStyle = hot ? "#f97316" : "#dc2626"; c.fill();
          c.strokeStyle = "#fff"; c.lineWidth = 1.5; c.stroke();
        }
      }
      // the cursor
      if (st.cursor) {
        const x = s.sx(st.cursor.x), y = s.sy(st.cursor.y);
        c.strokeStyle = "#1d4ed8"; c.lineWidth = 1.5;
        c.beginPath(); c.moveTo(x - 9, y); c.lineTo(x - 3, y); c.moveTo(x + 3, y); c.lineTo(x + 9, y);
        c.moveTo(x, y - 9); c.lineTo(x, y - 3); c.moveTo(x, y + 3); c.lineTo(x, y + 9); c.stroke();
      }
    });
    bigBar(ctx, s.box.l, h - 34, s.box.r - s.box.l, 12, "0", String(n - 1), "frame in the video");
    mapCv.dataset.points = String(n);
    mapCv.dataset.inducing = String(dec.q === 2 ? dec.m : 0);
  }

  function drawStrip() {
    if (!strip.begin()) return;
    const n = st.n, { w, h } = strip;
    const s = strip.area(-0.5, n - 0.5, 0, 1, { l: strip.m.l, r: w - strip.m.r, t: strip.m.t, b: h - strip.m.b });
    st.stripScale = s;
    const ctx = strip.ctx;
    const g = ctx.createLinearGradient(s.box.l, 0, s.box.r, 0);
    for (let k = 0; k <= 15; k++) { const c = viridis(k / 15); g.addColorStop(k / 15, `rgb(${c.join(",")})`); }
    ctx.fillStyle = g; ctx.fillRect(s.box.l, s.box.t, s.box.r - s.box.l, s.box.b - s.box.t);
    if (st.from >= 0) {
      ctx.fillStyle = "rgba(255,255,255,0.72)";
      ctx.fillRect(s.box.l, s.box.t, s.sx(st.from - 0.5) - s.box.l, s.box.b - s.box.t);
      ctx.fillRect(s.sx(st.to + 0.5), s.box.t, s.box.r - s.sx(st.to + 0.5), s.box.b - s.box.t);
      ctx.strokeStyle = "#111827"; ctx.lineWidth = 1.5;
      ctx.strokeRect(s.sx(st.from - 0.5), s.box.t + 0.5, s.sx(st.to + 0.5) - s.sx(st.from - 0.5), s.box.b - s.box.t - 1);
    }
    if (st.hover >= 0) { ctx.fillStyle = "#111827"; ctx.fillRect(s.sx(st.hover) - 1, s.box.t - 3, 2, s.box.b - s.box.t + 6); }
    ctx.fillStyle = "#5f6b7a"; ctx.textBaseline = "top"; ctx.textAlign = "left"; ctx.fillText("frame 0", s.box.l, s.box.b + 2);
    ctx.textAlign = "right"; ctx.fillText(`frame ${n - 1}`, s.box.r, s.box.b + 2);
    ctx.textAlign = "center";
    ctx.fillText(st.from >= 0 ? `frames ${st.from}–${st.to} lit` : "the video, in order", (s.box.l + s.box.r) / 2, s.box.b + 2);
    ctx.textAlign = "right"; ctx.textBaseline = "middle"; ctx.fillText("video", s.box.l - 6, (s.box.t + s.box.b) / 2);
  }

  return {
    // for tests and tours (window.dgpviz.panels.frey)
    stats: st.stats,
    // screen returns latent (x, y) in CSS pixels of the map, or null.
    screen(x, y) { const s = st.scale, k = getDrawScale(); return s ? [k * s.sx(x), k * s.sy(y)] : null; },
    // handle returns decoder inducing input j in CSS pixels of the map.
    handle(j) {
      const f = app.state.frame, s = st.scale;
      const L = f?.layers[f.layers.length - 1];
      if (!s || !L?.z?.length || L.q !== 2) return null;
      const k = getDrawScale(); // drawing units → CSS pixels (presentation)
      return [k * s.sx(L.z[2 * j]), k * s.sy(L.z[2 * j + 1])];
    },
    range(a, b) {
      if (a >= 0) { setRange(a, b); return; }
      st.from = st.to = -1; fromIn.value = "0"; toIn.value = String(Math.max(0, st.n - 1)); app.redraw();
    },
    get lit() { return { from: st.from, to: st.to }; },
    draw(state) {
      const S = state.setup?.frey;
      document.body.classList.toggle("frey-mode", !!S);
      root.hidden = !S;
      if (!S) return;
      if (st.dataId !== state.setup.data_id) {
        st.dataId = state.setup.data_id; st.n = state.setup.n;
        st.tiles = null; st.tileImgs = []; st.cursor = null; st.cursorFace = null; st.hover = -1; st.from = st.to = -1;
        ids.clear(); st.inflight = { cursor: 0, frame: 0, tiles: 0 }; // answers for old data are dropped by app.js
        xr.reset(); yr.reset();
        fromIn.max = toIn.max = String(st.n - 1); fromIn.value = "0"; toIn.value = String(st.n - 1);
      }
      const f = state.frame;
      if (!f) return;
      performance.mark("frey-draw-start");
      drawMap(f);
      drawStrip();
      performance.measure("frey-draw", "frey-draw-start");
      st.stats.draws++;
      if (f.iter !== st.lastIter || !st.tiles) { st.lastIter = f.iter; pump(); }
    },
  };
});
