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
import { fmt, fmtBound, setDrawScale, getDrawScale, onCanvasResize } from "./plot.js";
import { historyPoints, presentCommand, otherRelay, slideOf, parseSlide, SHOWS } from "./follow.js";
import { editReadout } from "./editreadout.js";
import { lessons } from "./lesson.js";
import { downloads } from "./downloads.js";

const $ = (id) => document.getElementById(id);

const state = {
  // The server parsed and validated the URL's configuration (falling back
  // to its defaults, with a notice, when the URL was unusable).
  config: JSON.parse(document.body.dataset.config),
  setup: null,
  frame: null,
  history: [],
  maxHistory: Infinity, // the hello's max_history: how many points the bound history keeps
  running: false,
  connected: false,
  session: 0,
  // A follower of a relay who forks opens the presenter's page with
  // ?resume=TOKEN: the first connection resumes that session.
  resume: new URLSearchParams(location.search).get("resume") || undefined,
  slide: "", // the lecture's slide (app.setSlide; mirrored by followers)
  // show is what the page shows (the "slide" followers mirror): name one
  // of SHOWS — "live" (fit, layers, bound), "samples" (the same with
  // samples through the network), "depth", "messages" — and at, the
  // input (model units) the samples' slice is taken at (null: the
  // steepest point of the fit).
  show: { name: "live", at: null },
};

let ws = null, nextId = 1, retry = 0, drawQueued = false, switching = false; // switching: a deliberate reconnect (a loaded model)
// leaving: the page is being left or put in the back-forward cache; its
// session ends now (the socket's "goodbye" also ends its share at once)
// rather than running on for a page nobody sees.
let leaving = false;
addEventListener("pagehide", () => { leaving = true; ws?.close(1000, "page closed"); });
addEventListener("pageshow", (e) => { if (e.persisted) { leaving = false; state.resume = undefined; connect(); } });
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
  // drawScale is the plots' type scale (presentation mode's): for tests.
  drawScale: getDrawScale,
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
  // setView shows one of the page's views (SHOWS), a "slide" of the live
  // session that followers mirror.
  setView(name, at) { setShow({ name, at: at === undefined ? state.show.at : at }); },
  // setSliceAt moves the samples' slice to input x (model units);
  // transient: while dragging (followers get it when the drag ends).
  setSliceAt(x, transient) { state.show.at = x; app.redraw(); if (!transient) setShow({ ...state.show }); },
  // urlChanged writes the page's state to its URL again (a lesson began or ended).
  urlChanged() { if (state.config) applyConfig(state.config); },
  // say shows a short message (a key that can do nothing says why).
  say(msg, kind = "info") { toast(msg, kind); },
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
  for (const p of [...mounted, ...panels.layers, readout]) {
    if (!p) continue;
    try { p.draw(state); } catch (e) { console.error(e); app.errors.push(`${p.kind ?? "edit readout"}: ${e.message}`); }
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
    if (leaving) return; // the page is going (pagehide)
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
    const reply = JSON.parse(text);
    state.resume = reply.resume;
    // reply.note: what the server chose for the data (a smaller model that fits its limits)
    toast(reply.note ? `Loading ${file.name}: ${reply.note}` : `Loading ${file.name}…`, "ok");
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
      state.maxHistory = m.max_history; // the server's bound for the bound history, which the page keeps too
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
      lesson.connected();
      $("save-model").href = `/model.json?session=${encodeURIComponent(m.figure_key)}`;
      if (m.config) applyConfig(m.config);
      break;
    case "ack":
      // the last of several "[" / "]" presses answered (earlier ones' acks
      // leave the count from the last request)
      if (m.op === "architecture" && (!depthPending || m.config?.hidden?.join(",") === depthPending.join(","))) depthPending = null;
      if (m.op === "fork" && m.url) { location.assign(m.url); break; } // forked through a relay: on the presenter's server
      if (m.op === "fork" && m.resume) { // our own copy: reconnect into it
        view.follow = "";
        state.resume = m.resume;
        switching = true;
        ws?.close();
      }
      if (m.config) applyConfig(m.config);
      if (typeof m.running === "boolean") { state.running = m.running; showRunning(); }
      if (!["move", "pause", "play", "step", "hold", "release", "message_figure", "message_figure_off", "fit_density", "speed"].includes(m.op)) toast(m.message, "ok");
      if (typeof m.undo === "number") showUndo(m);
      break;
    case "presentation": // the presenter's, mirrored (docs/protocol.md, "Following")
      if (!state.follower) break;
      state.slide = m.slide;
      if (m.present !== view.present) setPresent(m.present);
      if (m.scale !== view.scale) setScale(m.scale);
      followSlide(m.slide);
      state.slide = m.slide; // as the presenter sent it
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
    // The same data again (a resumed session) keeps it too.
    const edit = state.setup && m.name === state.setup.name && (m.data_id === state.setup.data_id || m.edited || state.setup.edited);
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
    // A stochastic fit's frames show its last full-data check's model:
    // the history holds the checks, never the steps' minibatch estimates.
    const p = { iter: m.bound_iter ?? m.iter, bound: m.bound, lik: m.likelihood, terms: m.layers.map((l) => [l.kl, l.compression, l.propagation]) };
    if (h.length && h[h.length - 1].iter === m.iter) h[h.length - 1] = p; else h.push(p);
    if (h.length > state.maxHistory) state.history = h.filter((_, k) => k % 2 === 0 || k === h.length - 1);
  }
  ensureLayerPanels(m);
  $("iteration").textContent = String(m.iter);
  $("bound-value").textContent = m.bound != null ? fmtBound(m.bound) : "–";
  showStochastic(m);
  $("ips").textContent = m.running ? String(Math.round(m.ips)) : "0";
  $("followers").textContent = String(m.followers ?? 0);
  $("followers-box").hidden = !(m.followers > 0) || state.follower;
  showRunning();
  showCollapse(m);
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
  layout();
}

// ---- controls ----

function applyConfig(c) {
  state.config = c;
  const q = (view.follow ? `follow=${encodeURIComponent(view.follow)}` : configToQuery(c)) + viewQuery();
  if (location.search.slice(1) !== q) history.replaceState(null, "", `${location.pathname}?${q}`);
  if (document.activeElement !== $("seed")) $("seed").value = String(c.seed);
  $("optimizer").value = c.method;
  if (document.activeElement !== $("learning-rate")) $("learning-rate").value = String(c.learning_rate);
  $("learning-rate").disabled = !usesLearningRate(state.frame?.optimizer.method ?? c.method);
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
  $("watch-repair").checked = !!c.watch_repair;
  for (const el of document.querySelectorAll("input[data-group]")) el.checked = c.frozen.includes(el.dataset.group);
}

// usesLearningRate: Adam's steps, and SVI's Adam steps, take the learning
// rate; L-BFGS's line search does not.
const usesLearningRate = (method) => method === "adam" || method === "svi";

// showStochastic says what a stochastic fit's numbers are: the bound shown
// is the last full-data check's (of the model drawn, iteration bound_iter),
// the steps' own is a minibatch estimate, beside the passes over the data.
// The menu shows the method that runs (svi where L-BFGS was asked for on
// large data: admit.Config.Trainer).
function showStochastic(m) {
  const o = m.optimizer, sto = !!o?.stochastic;
  $("bound-label").textContent = sto ? "bound, full data (nats)" : "bound (nats)";
  $("bound-value").title = sto ? `Computed on every row at iteration ${m.bound_iter}, the best check so far: the model drawn is that iteration's` : "";
  $("stochastic-box").hidden = !sto;
  if (sto) {
    // compact: the label says "estimate · epochs", and the header's row
    // must hold at 1280 px
    const est = o.estimate != null ? fmt(o.estimate) : "checked";
    $("stochastic").textContent = `${est} · ${o.epochs < 10 ? o.epochs.toFixed(2) : Math.round(o.epochs)}`;
  }
  if (o && document.activeElement !== $("optimizer")) $("optimizer").value = o.method;
  $("learning-rate").disabled = !usesLearningRate(o?.method);
}

// showRunning says what the optimizer is doing. "paused" only when a
// person paused it; an optimizer that stopped by itself says why
// (converged, failed, or the model collapsed — never "converged" then).
function showRunning() {
  const b = $("play"), f = state.frame, opt = f?.optimizer;
  // the button plays unless the optimizer runs or will carry on by itself
  const going = state.running || (f && !f.paused && f.held);
  b.textContent = going ? "❚❚ Pause" : "▶ Play";
  b.setAttribute("aria-pressed", String(!!going));
  const st = $("status");
  st.textContent = !state.connected ? "disconnected" : !f ? "connecting…"
    : f.held ? "editing" : state.running ? (opt?.fast ? "optimising, fast" : "optimising")
    : f.collapse ? `collapsed (layer ${f.collapse.layer + 1})`
    : f.paused ? "paused"
    : opt?.converged ? `converged (${opt.status})` : opt?.status === "failure" ? "stopped: the model cannot be evaluated"
    : opt?.status === "degenerate" ? "stopped: degenerate state" : opt?.status && opt.status !== "not terminated" ? `stopped (${opt.status})` : "ready";
  // a fit on worker processes (viz serve -workers-nats) says how many
  // made its last evaluation, as viz fit's progress does
  const w = state.connected && opt?.workers;
  if (w) st.textContent += `, ${w} worker${w === 1 ? "" : "s"}`;
  st.title = f?.held ? "The optimizer waits while you drag; it carries on when you let go"
    : state.running && opt?.fast ? `Running as fast as it can until the bound settles, then at ${state.config?.speed || "full"} iterations per second`
    : state.running ? `Running at up to ${state.config?.speed || "full"} iterations per second (the bound has settled)`
    : f?.paused ? "Paused by you: press Play (space) to go on; edits wait for it"
    : opt?.status && opt.status !== "not terminated" ? `Stopped by ${opt.status} (${opt.explain})` : "";
  if (w) st.title += `${st.title ? ". " : ""}The fit's evaluations run on ${w} worker process${w === 1 ? "" : "es"} (viz worker), each on its shards of the rows`;
  st.dataset.state = !f ? "" : f.held ? "editing" : state.running ? "running" : f.collapse ? "collapsed" : f.paused ? "paused" : opt?.converged ? "converged" : "stopped";
}

// showCollapse says plainly when the model has collapsed (view.Diagnose):
// which layer, why, what the next layer's inputs look like, and offers
// undo.
function showCollapse(f) {
  const el = $("collapse"), c = f.collapse;
  if (!c || f.running) { el.hidden = true; delete el.dataset.key; return; }
  const key = JSON.stringify(c) + f.bound;
  if (el.dataset.key === key) { el.hidden = false; return; }
  el.dataset.key = key;
  const L = c.layer + 1, nL = f.layers.length;
  const why = c.prior ? `its q(u) is the prior (KL ≈ ${fmt(Math.max(0, c.kl))} nats)` : `its function is flat (its inducing outputs vary by ${fmt(c.function_spread)}, its noise sd is ${fmt(c.noise_sd)})`;
  const inputs = c.input_lo != null && L < nL ? `; layer ${L + 1}'s inputs span ${fmt(c.input_lo)} to ${fmt(c.input_hi)}, the same for every datum` : "";
  el.replaceChildren();
  const p = document.createElement("span");
  p.textContent = `The model has collapsed: layer ${L} passes nothing on — ${why}${inputs}. It now predicts the same for every input (bound ${fmt(f.bound)} nats). This is not convergence: undo the edit that led here.`;
  el.append(p);
  if (!state.follower) {
    const u = document.createElement("button");
    u.type = "button"; u.textContent = "↶ Undo"; u.dataset.testid = "collapse-undo";
    u.title = $("undo").title;
    u.disabled = $("undo").disabled;
    u.addEventListener("click", undo);
    el.append(u);
  }
  el.hidden = false;
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
  $("watch-repair").addEventListener("change", (e) => app.send({ op: "speed", watch_repair: e.target.checked }));
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
    if (e.key === "?" || (e.key === "/" && e.shiftKey)) { e.preventDefault(); toggleHelp(); return; }
    if (e.key === "Escape") { if (!$("help").hidden) toggleHelp(false); return; }
    // A presenter's clicker sends PageDown/PageUp (some the arrows): the
    // next and previous lesson step, or slide.
    if (e.key === "PageDown" || e.key === "ArrowRight") { e.preventDefault(); advance(+1); return; }
    if (e.key === "PageUp" || e.key === "ArrowLeft") { e.preventDefault(); advance(-1); return; }
    const slide = { 1: "live", 2: "samples", 3: "depth", 4: "messages" }[e.key];
    if (slide) { showSlide(slide); return; }
    if (state.follower && "srl][".includes(e.key)) { toast("You are following a shared session (read-only): Fork it to make it yours.", "error"); return; }
    if (e.key === " ") { e.preventDefault(); playPause(); }
    else if (e.key === "s") step();
    else if (e.key === "r") reset();
    else if (e.key === "p") setPresent(!view.present);
    else if (e.key === "l") lesson.toggle();
    else if (e.key === "]") { e.preventDefault(); depth(+1); }
    else if (e.key === "[") { e.preventDefault(); depth(-1); }
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
  $("help-open").addEventListener("click", () => toggleHelp());
  $("help-close").addEventListener("click", () => toggleHelp(false));
  for (const b of document.querySelectorAll("[data-show]")) b.addEventListener("click", () => showSlide(b.dataset.show));
  setPresent(view.present);

  new ResizeObserver(() => { layout(); app.redraw(); }).observe(document.body);
  onCanvasResize(() => app.redraw()); // a canvas's size changed (plot.js)
}

// ---- presentation mode ----

function viewQuery() {
  const l = lesson?.current(); // a lesson under way stays in the URL (a bookmark opens it)
  return (view.present ? `&present=1&scale=${view.scale.toFixed(1)}` : "") + (l && !view.follow ? `&lesson=${encodeURIComponent(l.name)}` : "");
}

// ---- sharing: followers watch a session read-only (docs/protocol.md) ----

function shareLink() {
  if (!state.shareKey) return;
  const url = `${state.shareURL || `${location.origin}/`}?follow=${encodeURIComponent(state.shareKey)}${view.present ? "&present=1" : ""}`;
  navigator.clipboard?.writeText(url).catch(() => {});
  $("share-link").value = url;
  $("share-link").size = url.length + 2; // the whole link in view: students copy it off the screen
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

// layout sizes presentation mode's grid to the screen: the fit, every
// layer and the bound in as many columns as make each panel closest to
// a 1.6:1 landscape, in rows of equal height that fill the screen below
// the header exactly (style.css: body.present is 100vh and does not
// scroll), the bound spanning what the last row leaves. The depth and
// message-figure slides take the whole grid.
function layout() {
  const el = $("panels"), bound = document.querySelector('[data-testid="panel-bound"]');
  const kind = state.setup?.view?.kind ?? "regression";
  document.body.dataset.show = state.show.name;
  if (!view.present || kind !== "regression") {
    el.style.removeProperty("--cols"); el.style.removeProperty("--rows");
    if (bound) bound.style.removeProperty("grid-column");
    return;
  }
  let cols = 1, rows = 1;
  const n = 2 + panels.layers.length;
  if (state.show.name === "live") {
    // Judged by the plot inside each panel: a panel's title, legend, axes
    // and a layer's penalty strip take about 60 × 110 px at type scale 1.
    const W = el.clientWidth || innerWidth, H = el.clientHeight || innerHeight * 0.85, k = view.scale;
    let best = Infinity;
    for (let c = 1; c <= n; c++) {
      const r = Math.ceil(n / c);
      if (c * r - n >= c) continue; // an empty row
      const pw = W / c - 60 * k, ph = H / r - 110 * k;
      const score = ph < 40 || pw < 80 ? 1e6 - ph : Math.abs(Math.log(pw / ph / 1.6));
      if (score < best) { best = score; cols = c; rows = r; }
    }
  }
  el.style.setProperty("--cols", String(cols));
  el.style.setProperty("--rows", String(rows));
  if (bound) bound.style.setProperty("grid-column", `span ${Math.max(1, cols * rows - (n - 1))}`);
}

function setPresent(on) {
  view.present = on;
  document.body.classList.toggle("present", on);
  document.body.classList.remove("show-controls");
  $("present").setAttribute("aria-pressed", String(on));
  $("present").textContent = on ? "Exit (p)" : "Present";
  setScale(view.scale);
  layout();
  sendPresentation();
}

// ---- slides: views of the same live session (SHOWS) ----

// setShow makes s what the page shows, and tells followers.
function setShow(s) {
  const prev = state.show.name;
  state.show = { name: SHOWS.includes(s.name) ? s.name : "live", at: Number.isFinite(s.at) ? s.at : null };
  state.slide = slideOf(state.show, lesson.current());
  layout();
  if (prev !== state.show.name) {
    for (const p of mounted) p.shown?.(state.show.name, state.follower);
    if (!view.present && state.show.name !== prev) document.getElementById({ depth: "panel-depth", messages: "panel-messages" }[state.show.name] ?? "panel-fit")?.scrollIntoView({ block: "start" });
  }
  sendPresentation();
  app.redraw();
}

// showSlide goes to a slide by key or button, saying why when it cannot.
function showSlide(name) {
  const st = state.setup;
  if ((name === "samples" || name === "depth") && !(st && st.q === 1 && st.d === 1)) { toast(`the ${name === "depth" ? "depth comparison" : "samples through the network"} needs data with one input and one output`, "error"); return; }
  if (name === "messages" && !(state.frame?.layers ?? []).some((l) => l.q === 1 && l.d === 1)) { toast("the message figure needs a layer with one input and one output", "error"); return; }
  if (state.follower) { toast("You are following: the presenter chooses the slide.", "error"); return; }
  setShow({ name, at: state.show.at });
}

// advance goes to the next (+1) or previous (−1) lesson step, or slide.
function advance(d) {
  if (state.follower) { toast("You are following: the presenter turns the slides.", "error"); return; }
  if (lesson.active()) { lesson.go(d); return; }
  const k = SHOWS.indexOf(state.show.name) + d;
  if (k < 0 || k >= SHOWS.length) { toast(d > 0 ? "this is the last slide (PageUp goes back)" : "this is the first slide"); return; }
  showSlide(SHOWS[k]);
}

// followSlide shows what the presenter's slide says (a follower).
function followSlide(slide) {
  const p = parseSlide(slide);
  lesson.follow(p.lesson, p.step);
  setShow(p.show);
}

function toggleHelp(open) {
  const h = $("help");
  h.hidden = open === undefined ? !h.hidden : !open;
  if (!h.hidden) $("help-close").focus();
}

// The page's own scale, not presenting: a window WIDE px or wider (a
// 1920 px projector, read from afar) draws its canvases WIDE_SCALE times
// larger and gets body.wide, whose rules (style.css) raise the small type
// to 13 px or more; presenting has its own scale (A+).
const WIDE = 1600, WIDE_SCALE = 1.15;
const pageScale = () => (innerWidth >= WIDE ? WIDE_SCALE : 1);
addEventListener("resize", () => { if (!view.present && getDrawScale() !== pageScale()) setScale(view.scale); });

function setScale(f) {
  view.scale = Math.round(Math.min(2.5, Math.max(0.8, f)) * 10) / 10;
  const k = view.present ? view.scale : pageScale();
  setDrawScale(k);
  document.body.classList.toggle("wide", !view.present && k > 1);
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
  if (state.setup?.view?.kind && state.setup.view.kind !== "regression") { toast(`[ and ] change the depth of the regression demo; these data choose their architecture in the controls (c)`, "error"); return; }
  if (delta < 0 && base.length === 0) { toast("one layer is the fewest: [ can remove no more (] adds one)", "error"); return; }
  const hidden = delta > 0 ? [...base, 1] : base.slice(0, -1);
  if (hidden.length + 1 > (state.limits?.max_layers ?? 6)) { toast(`at most ${state.limits?.max_layers ?? 6} layers: ] can add no more`, "error"); return; }
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

const readout = editReadout(app);
const lesson = lessons(app, { setShow: (s) => setShow(s), send: app.send, state, toast });
app.lesson = lesson;
wire();
applyConfig(state.config);
mountPanels().then(() => { downloads(app); connect(); }, (e) => { app.errors.push(`panels: ${e.message}`); connect(); });
