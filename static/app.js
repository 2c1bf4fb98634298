// dgpviz page: one websocket session per tab. Frames (binary) update the
// state; panels draw it at most once per animation frame; controls send
// commands; the configuration lives in the URL.
import { decode, configToQuery, VERSION } from "./protocol.js";
import { create } from "./panels/registry.js";
// The layer panels are cloned from a template, one per layer, of a kind
// chosen per frame; every other panel is mounted from its element's
// data-panel attribute (mountPanels).
import "./panels/layer.js";
import "./panels/layernd.js";
import { fmt, setDrawScale, onCanvasResize } from "./plot.js";
import { historyPoints, presentCommand, otherRelay } from "./follow.js";

const $ = (id) => document.getElementById(id);
const MAX_HISTORY = 4000;

const state = {
  // The server parsed and validated the URL's configuration (falling back
  // to its defaults, with a notice, when the URL was unusable).
  config: JSON.parse(document.body.dataset.config),
  setup: null,
  frame: null,
  history: [],
  running: false,
  connected: false,
  session: 0,
  // A follower of a relay who forks opens the presenter's page with
  // ?resume=TOKEN: the first connection resumes that session.
  resume: new URLSearchParams(location.search).get("resume") || undefined,
  slide: "", // the lecture's slide (app.setSlide; mirrored by followers)
};

let ws = null, nextId = 1, retry = 0, drawQueued = false, switching = false; // switching: a deliberate reconnect (a loaded model)
let drawnSeq = -1, rafId = 0; // the last frame drawn (draw), per connection; the queued redraw

// view is how the page is shown, kept in the URL beside the configuration
// (present=1&scale=1.4) so that a lecturer's bookmark opens as it was.
const view = (() => {
  const q = new URLSearchParams(location.search);
  const scale = Number(q.get("scale"));
  // hops: relays this follower has tried since its last frame (follow.js)
  return { present: q.get("present") === "1", scale: scale >= 0.8 && scale <= 2.5 ? scale : 1.4, follow: q.get("follow") || "", hops: Number(q.get("hops")) || 0 };
})();

// panels: the page's panels by their data-panel name, and the layer panels.
const panels = { layers: [] };
const mounted = []; // the data-panel panels, in page order
const listeners = new Map(); // binary message type → panels' handlers

const app = {
  state,
  errors: [], // uncaught errors and drawing failures, for tests and the console

  send(cmd) {
    if (!ws || ws.readyState !== WebSocket.OPEN) { toast("not connected"); return 0; }
    // A follower may fork, and decode faces (answered from the presenter's model).
    if (state.follower && cmd.op !== "fork" && cmd.op !== "decode") {
      toast("You are following a shared session (read-only): Fork it to make it yours.", "error");
      return 0;
    }
    const id = nextId++;
    ws.send(JSON.stringify({ id, ...cmd }));
    return id;
  },
  panels: null,
  // handle returns layer li's inducing point k in client pixels, or null.
  handle(li, k) {
    return panels.layers[li]?.handleClient?.(k) ?? null;
  },
  // drop closes the socket as a network failure would (the page then
  // reconnects and resumes its session): for tests and the curious.
  drop() { ws?.close(); },
  // on subscribes fn to binary messages of a type other than frame and
  // setup (e.g. the message figure's "message_figure"), or to "error"
  // replies: each panel keeps its own.
  on(type, fn) {
    if (!listeners.has(type)) listeners.set(type, []);
    listeners.get(type).push(fn);
  },
  // setSlide says which slide the presenter is on: followers get it
  // ("presentation" listeners) with the presentation state.
  setSlide(slide) { state.slide = String(slide); sendPresentation(); },
  redraw() {
    if (drawQueued) return;
    drawQueued = true;
    rafId = requestAnimationFrame(draw);
  },
};
app.panels = panels;
window.addEventListener("error", (e) => app.errors.push(String(e.message)));
window.addEventListener("unhandledrejection", (e) => app.errors.push(String(e.reason)));
window.dgpviz = app; // for tests and the curious

function draw() {
  drawQueued = false;
  for (const p of [...mounted, ...panels.layers]) {
    if (!p) continue;
    try { p.draw(state); } catch (e) { console.error(e); app.errors.push(`${p.kind}: ${e.message}`); }
  }
  // Say which frame is drawn: the server sends the next one when the page
  // has drawn the last (docs/protocol.md, "drawn"), so the page draws
  // every frame it gets and none is built or sent for nothing.
  const f = state.frame;
  if (f && f.seq !== drawnSeq && ws?.readyState === WebSocket.OPEN) {
    drawnSeq = f.seq;
    ws.send(JSON.stringify({ op: "drawn", seq: f.seq }));
  }
}

// ---- connection ----

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  // After a disconnect, the token from the last hello resumes the session
  // (its model, iteration count and undo history) if the server still
  // holds it (docs/protocol.md, "Resuming").
  const resume = state.resume ? `&resume=${encodeURIComponent(state.resume)}` : "";
  const query = view.follow ? `follow=${encodeURIComponent(view.follow)}` : `${configToQuery(state.config)}${resume}`;
  ws = new WebSocket(`${proto}//${location.host}/ws?${query}`);
  drawnSeq = -1;
  ws.binaryType = "arraybuffer";
  ws.onopen = () => { state.connected = true; banner(""); };
  ws.onmessage = (ev) => {
    if (typeof ev.data === "string") onText(JSON.parse(ev.data));
    else { retry = 0; onBinary(decode(ev.data)); } // served (a refusal comes after hello, before any setup): back off afresh
  };
  ws.onclose = (ev) => {
    state.connected = false;
    state.running = false;
    showRunning();
    if (switching) { switching = false; setTimeout(connect, 0); return; }
    // A follower whose relay went away (closed, restarting, full) tries
    // another relay's page at once, each at most once until a frame comes
    // (then it waits and retries as any page); 1001 and 1008 say the
    // session ended.
    const other = state.follower && ![1000, 1001, 1008].includes(ev.code) && view.hops < (state.relays?.length ?? 0) ? otherRelay(state.relays) : "";
    if (other) { banner("Connection lost: following from another relay…"); location.replace(`${other}?follow=${encodeURIComponent(view.follow)}&hops=${view.hops + 1}${viewQuery()}`); return; }
    // 1013 "try again later" (the server is at capacity): wait longer.
    const delay = Math.min(ev.code === 1013 ? 30000 : 5000, (ev.code === 1013 ? 2000 : 500) * 2 ** retry++);
    const why = ev.reason ? `: ${ev.reason}` : "";
    banner(`Connection lost${why}. Reconnecting in ${(delay / 1000).toFixed(1)} s…`);
    setTimeout(connect, delay);
  };
}

// upload sends a saved model file (POST /model) or a CSV (POST /data) to
// the server, which parks a session starting from it; the page then
// reconnects into that session (resume).
async function upload(url, file) {
  try {
    const r = await fetch(url, { method: "POST", body: file });
    const text = await r.text();
    if (!r.ok) { toast(`Could not load ${file.name}: ${text.trim()}`, "error"); return; }
    state.resume = JSON.parse(text).resume;
    toast(`Loading ${file.name}…`, "ok");
    switching = true;
    ws?.close(); // onclose reconnects at once with state.resume
  } catch (err) {
    toast(`Could not load ${file.name}: ${err.message}`, "error");
  }
}

function onText(m) {
  if (m.v !== VERSION) { toast(`protocol version ${m.v} is not supported (want ${VERSION})`); return; }
  switch (m.type) {
    case "hello":
      state.session = m.session;
      state.figureKey = m.figure_key; // figure downloads (panels/messages.js)
      state.resume = m.resume; // for the next reconnect
      state.shareKey = m.share_key;
      state.follower = !!m.follower;
      document.body.classList.toggle("follower", state.follower);
      $("follow-bar").hidden = !state.follower;
      state.sets = m.datasets; // the catalogue, and a loaded model's own data
      state.limits = m.limits;
      state.relays = m.relays; // a relay's follower: other relays to try
      state.shareURL = m.share_url; // Share live links point there (relays), if set
      if (!state.follower) sendPresentation(true);
      $("save-model").href = `/model.json?session=${encodeURIComponent(m.figure_key)}`;
      if (m.config) applyConfig(m.config);
      break;
    case "ack":
      if (m.op === "architecture") depthPending = null;
      if (m.op === "fork" && m.url) { location.assign(m.url); break; } // forked through a relay: on the presenter's server
      if (m.op === "fork" && m.resume) { // our own copy: reconnect into it
        view.follow = "";
        state.resume = m.resume;
        switching = true;
        ws?.close();
      }
      if (m.config) applyConfig(m.config);
      if (typeof m.running === "boolean") { state.running = m.running; showRunning(); }
      if (!["move", "pause", "play", "step", "message_figure", "message_figure_off", "fit_density"].includes(m.op)) toast(m.message, "ok");
      if (typeof m.undo === "number") showUndo(m);
      break;
    case "presentation": // the presenter's, mirrored (docs/protocol.md, "Following")
      if (!state.follower) break;
      state.slide = m.slide;
      if (m.present !== view.present) setPresent(m.present);
      if (m.scale !== view.scale) setScale(m.scale);
      for (const fn of listeners.get("presentation") ?? []) fn(m);
      break;
    case "error":
      if (m.op === "architecture") depthPending = null;
      toast(m.error, "error");
      for (const fn of listeners.get("error") ?? []) fn(m); // e.g. a refused decode (views/autoencoder)
      break;
  }
}

function onBinary(m) {
  if (m.v !== VERSION) return;
  if (m.type === "history") { // a follower's bound history from the start
    if (state.setup && m.data_id === state.setup.data_id) state.history = historyPoints(m);
    app.redraw();
    return;
  }
  if (listeners.has(m.type)) { // e.g. the message figure's "message_figure" (panels/messages.js)
    if (state.setup && m.data_id === state.setup.data_id) for (const fn of listeners.get(m.type)) fn(m);
    app.redraw();
    return;
  }
  if (m.type === "setup") {
    // An edit of the data points (or its undo) keeps the bound's history;
    // a new data set starts it afresh.
    const edit = state.setup && m.name === state.setup.name && (m.edited || state.setup.edited);
    state.setup = m;
    if (m.warnings?.length) toast(`⚠ ${m.warnings.join(" · ")}`, "error");
    if (!edit) state.history = [];
    state.frame = null;
    return;
  }
  if (m.type !== "frame" || !state.setup || m.data_id !== state.setup.data_id) return;
  view.hops = 0;
  const prev = state.frame;
  state.frame = m;
  const ev = m.optimizer?.event;
  if (ev && ev !== prev?.optimizer?.event) toast(`optimizer: ${ev}`);
  state.running = m.running;
  // A new architecture or a new run starts the history again.
  const last = state.history[state.history.length - 1];
  if (last && (last.terms.length !== m.layers.length || m.iter < last.iter)) state.history = [];
  if (m.bound != null) {
    const h = state.history;
    const p = { iter: m.iter, bound: m.bound, lik: m.likelihood, terms: m.layers.map((l) => [l.kl, l.compression, l.propagation]) };
    if (h.length && h[h.length - 1].iter === m.iter) h[h.length - 1] = p; else h.push(p);
    if (h.length > MAX_HISTORY) state.history = h.filter((_, k) => k % 2 === 0 || k === h.length - 1);
  }
  ensureLayerPanels(m);
  $("iteration").textContent = String(m.iter);
  $("bound-value").textContent = m.bound != null ? fmt(m.bound) : "–";
  $("ips").textContent = m.running ? String(Math.round(m.ips)) : "0";
  $("followers").textContent = String(m.followers ?? 0);
  $("followers-box").hidden = !(m.followers > 0) || state.follower;
  showRunning();
  // A frame is drawn at once, not at the next animation frame: the server
  // sends the next one when this one is drawn ("drawn", in draw), and
  // waiting for an animation frame on each side of that would halve the
  // frame rate. A hidden page draws at its next animation frame (none
  // while hidden), and its frames wait meanwhile.
  if (document.hidden) { app.redraw(); return; }
  if (drawQueued) cancelAnimationFrame(rafId);
  draw();
}

// ---- panels ----

function ensureLayerPanels(f) {
  const host = $("layer-panels");
  // The autoencoder view draws its own latent map (views/autoencoder): no
  // layer panels for 560-D layers whose arrays frames leave out.
  const want = state.setup?.view?.kind === "autoencoder" ? [] : f.layers.map((l) => (l.q === 1 && l.d === 1 ? "layer1d" : "layernd"));
  const have = panels.layers.map((p) => p.kind);
  if (want.length === have.length && want.every((k, i) => k === have[i])) return;
  for (const p of panels.layers) p.destroy?.();
  host.replaceChildren();
  const tpl = $("tpl-layer");
  panels.layers = want.map((kind, i) => {
    const el = tpl.content.firstElementChild.cloneNode(true);
    el.id = `panel-layer-${i}`;
    el.dataset.testid = `panel-layer-${i}`;
    el.dataset.layer = String(i);
    el.querySelector("h2").id = `title-layer-${i}`;
    el.setAttribute("aria-labelledby", `title-layer-${i}`);
    host.append(el);
    return create(kind, el, app);
  });
  fitBound();
}

// ---- controls ----

function applyConfig(c) {
  state.config = c;
  const q = (view.follow ? `follow=${encodeURIComponent(view.follow)}` : configToQuery(c)) + viewQuery();
  if (location.search.slice(1) !== q) history.replaceState(null, "", `${location.pathname}?${q}`);
  if (document.activeElement !== $("seed")) $("seed").value = String(c.seed);
  $("optimizer").value = c.method;
  if (document.activeElement !== $("learning-rate")) $("learning-rate").value = String(c.learning_rate);
  $("learning-rate").disabled = c.method !== "adam";
  if (document.activeElement !== $("hidden")) $("hidden").value = c.hidden.join(",");
  if (document.activeElement !== $("inducing")) $("inducing").value = String(c.inducing);
  const sel = $("dataset");
  if (![...sel.options].some((o) => o.value === c.dataset)) {
    // A loaded model's or an uploaded CSV's own data (not in the server's
    // catalogue).
    const info = state.sets?.find((d) => d.name === c.dataset);
    const what = c.dataset.startsWith("model-") ? "loaded model" : info?.description.replace(/^uploaded: /, "") ?? "your data";
    sel.append(new Option(info ? `${what} (${info.rows}×${info.outputs})` : c.dataset, c.dataset));
  }
  sel.value = c.dataset;
  const sp = $("speed");
  if (![...sp.options].some((o) => o.value === String(c.speed))) sp.add(new Option(`${c.speed} it/s`, String(c.speed)), 0);
  sp.value = String(c.speed);
  for (const el of document.querySelectorAll("input[data-group]")) el.checked = c.frozen.includes(el.dataset.group);
}

function showRunning() {
  const b = $("play");
  b.textContent = state.running ? "❚❚ Pause" : "▶ Play";
  b.setAttribute("aria-pressed", String(state.running));
  const opt = state.frame?.optimizer;
  $("status").textContent = !state.connected ? "disconnected" : state.running ? "optimising"
    : opt?.converged ? `converged (${opt.status})` : opt?.status === "failure" ? "stopped: the model cannot be evaluated"
    : opt?.status === "degenerate" ? "stopped: degenerate state" : "paused";
}

let toastTimer = 0;
function toast(msg, kind = "info") {
  const t = $("toast");
  t.textContent = msg;
  t.dataset.kind = kind;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, kind === "error" ? 6000 : 2500);
}

function banner(msg) {
  const b = $("banner");
  b.textContent = msg;
  b.hidden = !msg;
}

// Undo and redo: the buttons say what they would undo, as the server
// reports it after every command.
function showUndo(m) {
  const u = $("undo"), r = $("redo");
  u.disabled = !m.undo; r.disabled = !m.redo;
  u.title = m.undo ? `Undo the ${m.undo_label} (Ctrl+Z)` : "Nothing to undo";
  r.title = m.redo ? `Redo the ${m.redo_label} (Ctrl+Shift+Z)` : "Nothing to redo";
}
const undo = () => app.send({ op: "undo" });
const redo = () => app.send({ op: "redo" });

const playPause = () => app.send({ op: state.running ? "pause" : "play" });
const step = () => app.send({ op: "step" });
const reset = () => {
  const seed = Number($("seed").value);
  if (!Number.isInteger(seed) || seed < 0) { toast("seed must be a non-negative integer", "error"); return; }
  app.send({ op: "reset", seed });
};

function wire() {
  $("play").addEventListener("click", playPause);
  $("step").addEventListener("click", step);
  $("reset").addEventListener("click", reset);
  $("seed").addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); reset(); } });
  $("optimizer").addEventListener("change", (e) => app.send({ op: "optimizer", method: e.target.value }));
  $("learning-rate").addEventListener("change", (e) => {
    const lr = Number(e.target.value);
    if (!(lr > 0)) { toast("learning rate must be a positive number", "error"); return; }
    app.send({ op: "optimizer", learning_rate: lr });
  });
  for (const el of document.querySelectorAll("input[data-group]")) {
    el.addEventListener("change", () => app.send({ op: "freeze", group: el.dataset.group, frozen: el.checked }));
  }
  const arch = () => {
    const txt = $("hidden").value.trim();
    const hidden = txt === "" ? [] : txt.split(",").map((s) => Number(s.trim()));
    if (hidden.some((w) => !Number.isInteger(w))) { toast("hidden widths: a comma-separated list of integers, e.g. 1,1", "error"); return; }
    app.send({ op: "architecture", hidden, inducing: Number($("inducing").value) });
  };
  $("apply-architecture").addEventListener("click", arch);
  for (const id of ["hidden", "inducing"]) $(id).addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); arch(); } });
  $("speed").addEventListener("change", (e) => app.send({ op: "speed", speed: Number(e.target.value) }));
  $("dataset").addEventListener("change", (e) => app.send({ op: "dataset", dataset: e.target.value }));
  $("controls").addEventListener("submit", (e) => e.preventDefault());
  $("load-model").addEventListener("change", (e) => { const f = e.target.files?.[0]; e.target.value = ""; if (f) upload("/model", f); });
  $("open-upload").addEventListener("click", () => $("upload-dialog").showModal());
  $("upload-data").addEventListener("change", (e) => {
    const f = e.target.files?.[0], shape = $("upload-shape").value.trim();
    e.target.value = "";
    $("upload-dialog").close();
    if (f) upload(`/data?name=${encodeURIComponent(f.name)}${shape ? `&shape=${encodeURIComponent(shape)}` : ""}`, f);
  });
  $("undo").addEventListener("click", undo);
  $("redo").addEventListener("click", redo);

  // Ctrl+Z, Ctrl+Shift+Z and Ctrl+Y (⌘ on a Mac), except in text fields,
  // where they keep their usual meaning.
  document.addEventListener("keydown", (e) => {
    if (!(e.ctrlKey || e.metaKey) || e.altKey) return;
    const t = e.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement) return;
    const k = e.key.toLowerCase();
    if (k === "z" && !e.shiftKey) { e.preventDefault(); undo(); }
    else if ((k === "z" && e.shiftKey) || k === "y") { e.preventDefault(); redo(); }
  });

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement) return;
    if (t instanceof HTMLButtonElement && (e.key === " " || e.key === "Enter")) return; // the button's own click
    if (e.key === " ") { e.preventDefault(); playPause(); }
    else if (e.key === "s") step();
    else if (e.key === "r") reset();
    else if (e.key === "p") setPresent(!view.present);
    else if (e.key === "]" || e.key === "PageDown") { e.preventDefault(); depth(+1); } // a presenter's clicker sends PageDown/PageUp
    else if (e.key === "[" || e.key === "PageUp") { e.preventDefault(); depth(-1); }
    else if (view.present && (e.key === "=" || e.key === "+")) setScale(view.scale + 0.1);
    else if (view.present && (e.key === "-" || e.key === "_")) setScale(view.scale - 0.1);
    else if (view.present && e.key === "c") document.body.classList.toggle("show-controls");
  });
  $("present").addEventListener("click", () => setPresent(!view.present));
  $("share").addEventListener("click", shareLink);
  $("share-close").addEventListener("click", () => { $("share-dialog").hidden = true; });
  $("fork").addEventListener("click", fork);
  $("font-larger").addEventListener("click", () => setScale(view.scale + 0.1));
  $("font-smaller").addEventListener("click", () => setScale(view.scale - 0.1));
  $("show-controls").addEventListener("click", () => document.body.classList.toggle("show-controls"));
  setPresent(view.present);

  new ResizeObserver(() => app.redraw()).observe($("panels"));
  onCanvasResize(() => app.redraw()); // a canvas's size changed (plot.js)
}

// ---- presentation mode ----

function viewQuery() {
  return view.present ? `&present=1&scale=${view.scale.toFixed(1)}` : "";
}

// ---- sharing: followers watch a session read-only (docs/protocol.md) ----

function shareLink() {
  if (!state.shareKey) return;
  const url = `${state.shareURL || `${location.origin}/`}?follow=${encodeURIComponent(state.shareKey)}${view.present ? "&present=1" : ""}`;
  navigator.clipboard?.writeText(url).catch(() => {});
  $("share-link").value = url;
  $("share-dialog").hidden = false;
  $("share-link").select();
}

function fork() {
  app.send({ op: "fork" });
}

// sendPresentation tells followers the presentation state (once per
// change; force: again, on a new connection).
let sentPresentation = "";
function sendPresentation(force) {
  if (state.follower || !ws || ws.readyState !== WebSocket.OPEN) return;
  const cmd = presentCommand(view.present, view.scale, state.slide);
  const key = JSON.stringify(cmd);
  if (key === sentPresentation && !force) return;
  sentPresentation = key;
  ws.send(key);
}

// fitBound lets the bound panel fill the last row of the presentation grid
// (3 columns: the fit, the layers, then the bound).
function fitBound() {
  const el = document.querySelector('[data-testid="panel-bound"]');
  if (!el) return;
  const used = (1 + panels.layers.length) % 3;
  el.style.gridColumn = view.present && used !== 0 ? `span ${3 - used}` : "";
}

function setPresent(on) {
  view.present = on;
  document.body.classList.toggle("present", on);
  document.body.classList.remove("show-controls");
  $("present").setAttribute("aria-pressed", String(on));
  $("present").textContent = on ? "Exit presentation" : "Present";
  setScale(view.scale);
  fitBound();
  sendPresentation();
}

function setScale(f) {
  view.scale = Math.round(Math.min(2.5, Math.max(0.8, f)) * 10) / 10;
  const k = view.present ? view.scale : 1;
  setDrawScale(k);
  document.body.style.setProperty("--ui-scale", String(k));
  if (state.config) applyConfig(state.config); // the URL
  app.redraw();
  sendPresentation();
}

// depth adds (+1) or removes (−1) a hidden layer of width 1: the paper's
// step figure, one layer at a time. Keys pressed before the server has
// answered count from the last request, so "[ [" removes two layers.
let depthPending = null; // the hidden widths last asked for, until acknowledged
function depth(delta) {
  const c = state.config;
  if (!c) return;
  const base = depthPending ?? c.hidden;
  if (delta < 0 && base.length === 0) return;
  const hidden = delta > 0 ? [...base, 1] : base.slice(0, -1);
  if (hidden.length + 1 > (state.limits?.max_layers ?? 6)) { toast(`at most ${state.limits?.max_layers ?? 6} layers`, "error"); return; }
  depthPending = hidden;
  app.send({ op: "architecture", hidden, inducing: c.inducing });
}

// mountPanels gives every element with a data-panel attribute the panel
// module of that name (static/panels/NAME.js), and every element with a
// data-view attribute that view (static/views/NAME/index.js): a new panel
// is one templ component and one module, and nothing here lists them.
async function mountPanels() {
  const els = [...document.querySelectorAll("#panels > [data-panel], #panels > [data-view]")];
  await Promise.all(els.map((el) => import(el.dataset.view ? `./views/${el.dataset.view}/index.js` : `./panels/${el.dataset.panel}.js`))); // in parallel
  for (const el of els) {
    const kind = el.dataset.view ?? el.dataset.panel;
    panels[kind] = create(kind, el, app);
    mounted.push(panels[kind]);
  }
}

wire();
applyConfig(state.config);
mountPanels().then(connect, (e) => { app.errors.push(`panels: ${e.message}`); connect(); });
