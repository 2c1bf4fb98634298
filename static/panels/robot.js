// Robot WiFi latent-space explorer (issue 6). Shown when the setup carries a
// "robot" section: the hidden layers' message means as three pairwise
// projections coloured by time (halos: ±2 sd), the true path, one access
// point's signal with the model's fit, and the penalties per scan. Views are
// linked: hovering a scan or brushing a time range (drag along the time axis
// of the signals or penalties view, or along a colour bar) highlights the
// same scans everywhere.
import { register } from "./registry.js";
import { niceTicks, fmt } from "../plot.js";
import { palette, colorBar } from "../colormap.js";

const PAD = { l: 42, r: 10, t: 18, b: 30 };
const CB = 24; // px under a latent view's projections for its colour bar
// Colour bins for batched drawing. Every view colours a scan by its time on
// one scale, 0 to the last (test) scan, so a colour means the same time in
// the latent views, on the path and on the colour bars.
const NB = 24;
const LAYER_COL = ["#0284c7", "#7c3aed", "#d97706", "#059669", "#db2777", "#4b5563"];

// A box with linear scales; eq: equal aspect.
function scale(box, x0, x1, y0, y1, eq = false) {
  if (!(x1 > x0)) { x0 -= 0.5; x1 += 0.5; }
  if (!(y1 > y0)) { y0 -= 0.5; y1 += 0.5; }
  let kx = (box.r - box.l) / (x1 - x0), ky = (box.b - box.t) / (y1 - y0);
  let ox = 0, oy = 0;
  if (eq) {
    const k = Math.min(kx, ky);
    ox = ((box.r - box.l) - k * (x1 - x0)) / 2; oy = ((box.b - box.t) - k * (y1 - y0)) / 2;
    kx = ky = k;
  }
  return {
    box, x0, x1, y0, y1,
    sx: (x) => box.l + ox + (x - x0) * kx, sy: (y) => box.b - oy - (y - y0) * ky,
    ix: (px) => x0 + (px - box.l - ox) / kx, iy: (py) => y0 + (box.b - oy - py) / ky,
  };
}

function sizeCanvas(cv) {
  const r = cv.getBoundingClientRect();
  const dpr = window.devicePixelRatio || 1;
  const W = Math.max(1, Math.round(r.width * dpr)), H = Math.max(1, Math.round(r.height * dpr));
  if (cv.width !== W || cv.height !== H) { cv.width = W; cv.height = H; }
  const ctx = cv.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, r.width, r.height);
  ctx.font = "11px system-ui, -apple-system, 'Segoe UI', sans-serif";
  return { ctx, w: r.width, h: r.height };
}

function axes(ctx, s, xlabel, ylabel, { xt = 4, yt = 4 } = {}) {
  const b = s.box;
  ctx.save();
  ctx.strokeStyle = "#e6e9ee"; ctx.fillStyle = "#6b7785"; ctx.lineWidth = 1;
  ctx.textAlign = "center"; ctx.textBaseline = "top";
  for (const t of niceTicks(s.x0, s.x1, xt)) {
    const px = Math.round(s.sx(t)) + 0.5;
    if (px < b.l - 1 || px > b.r + 1) continue;
    ctx.beginPath(); ctx.moveTo(px, b.t); ctx.lineTo(px, b.b); ctx.stroke();
    ctx.fillText(fmt(t), px, b.b + 3);
  }
  ctx.textAlign = "right"; ctx.textBaseline = "middle";
  for (const t of niceTicks(s.y0, s.y1, yt)) {
    const py = Math.round(s.sy(t)) + 0.5;
    if (py < b.t - 1 || py > b.b + 1) continue;
    ctx.beginPath(); ctx.moveTo(b.l, py); ctx.lineTo(b.r, py); ctx.stroke();
    ctx.fillText(fmt(t), b.l - 4, py);
  }
  ctx.strokeStyle = "#9aa5b1";
  ctx.strokeRect(b.l + 0.5, b.t + 0.5, b.r - b.l, b.b - b.t);
  ctx.fillStyle = "#1f2933"; ctx.textAlign = "center"; ctx.textBaseline = "bottom";
  if (xlabel) ctx.fillText(xlabel, (b.l + b.r) / 2, b.b + 28);
  if (ylabel) { ctx.translate(b.l - 30, (b.t + b.b) / 2); ctx.rotate(-Math.PI / 2); ctx.textBaseline = "middle"; ctx.fillText(ylabel, 0, 0); }
  ctx.restore();
}

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

register("robot", (root, app) => {
  const body = root.querySelector(".robot-body");
  const st = {
    sel: { lo: -1, hi: -1 }, hover: -1, ap: -1, dataId: -1,
    out: null, outVar: null, test: null, testVar: null, // cached output-layer arrays (sent once per analysis)
    drag: null, lastSend: 0, stats: { draws: 0 },
    testH: null, showTest: true, // hidden layers' messages at the held-out scans
    showRevisits: true, // links between the revisit pairs
  };
  const showRev = root.querySelector('[data-testid="robot-show-revisits"]');
  showRev?.addEventListener("change", () => { st.showRevisits = showRev.checked; app.redraw(); });
  const showTest = root.querySelector('[data-testid="robot-show-test"]');
  showTest?.addEventListener("change", () => { st.showTest = showTest.checked; app.redraw(); });
  const views = {};
  let built = false;

  function build(setup) {
    body.replaceChildren();
    const mk = (key, title, cls, extra = []) => {
      const cv = el("canvas", { "data-testid": `robot-${key}-canvas`, role: "img", "aria-label": title });
      const v = el("div", { class: `rv ${cls}`, "data-testid": `robot-${key}` }, el("h3", { text: title }), ...extra, el("div", { class: "rv-plot" }, cv));
      body.append(v);
      views[key] = { root: v, cv, title: v.querySelector("h3") };
      return views[key];
    };
    mk("latent-0", "Hidden layer 1 (h₁): message means, three projections", "latent l0");
    mk("path", "True path (x, y in metres; never used for fitting)", "path");
    mk("latent-1", "Hidden layer 2 (h₂): message means, three projections", "latent l1");
    const sel = el("select", { "data-testid": "robot-ap", title: "access point" });
    setup.output_names.forEach((nm, j) => sel.add(new Option(`AP ${j + 1} · ${nm}`, String(j))));
    sel.addEventListener("change", () => { st.ap = Number(sel.value); app.redraw(); });
    mk("signals", "Signal strength of one access point over time", "signals", [el("label", { class: "ap" }, "Access point ", sel)]);
    views.signals.select = sel;
    mk("penalties", "Penalties per scan (nats): where the compression and propagation terms concentrate", "penalties");
    for (const [key, v] of Object.entries(views)) wire(key, v);
    built = true;
  }

  // ---- data helpers ----
  const S = () => app.state.setup, F = () => app.state.frame;
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
  // byBin returns, per colour bin, the scans (all of them, training then
  // test) whose time falls in it on the shared time scale.
  function byBin() {
    const s = S();
    if (st._bins && st._binsFor === s) return st._bins;
    const ts = times(), tmax = ts[ts.length - 1] || 1;
    const out = Array.from({ length: NB }, () => []);
    for (let i = 0; i < ts.length; i++) out[Math.min(NB - 1, Math.max(0, Math.floor((ts[i] / tmax) * NB)))].push(i);
    st._bins = out; st._binsFor = s;
    return out;
  }
  const dbm = (j, v) => { const s = S(), r = R(); return (v * s.norm_y.scale[j] + s.norm_y.mean[j]) * r.dbm_scale + r.dbm_offset; };
  const sdDbm = (j, vr) => { const s = S(), r = R(); return Math.sqrt(Math.max(0, vr)) * s.norm_y.scale[j] * Math.abs(r.dbm_scale); };
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
  // drawRevisits draws the revisit pairs as faint links between the points
  // at (x(i), y(i)) (the hovered scan's, strong).
  function drawRevisits(ctx, x, y) {
    if (!st.showRevisits) return;
    const rp = R().revisit_pairs || [];
    ctx.beginPath();
    for (let k = 0; k + 1 < rp.length; k += 2) { ctx.moveTo(x(rp[k]), y(rp[k])); ctx.lineTo(x(rp[k + 1]), y(rp[k + 1])); }
    ctx.strokeStyle = "rgba(220,38,38,0.10)"; ctx.lineWidth = 1; ctx.stroke();
    if (st.hover >= 0 && st.hover < S().n) {
      ctx.beginPath();
      for (const j of partners()[st.hover]) { ctx.moveTo(x(st.hover), y(st.hover)); ctx.lineTo(x(j), y(j)); }
      ctx.strokeStyle = "rgba(220,38,38,0.85)"; ctx.lineWidth = 1.5; ctx.stroke();
    }
  }
  const anyLit = () => active() || st.hover >= 0;
  function nearestTime(t) {
    const ts = times();
    let best = 0;
    for (let i = 1; i < ts.length; i++) if (Math.abs(ts[i] - t) < Math.abs(ts[best] - t)) best = i;
    return best;
  }

  // ---- interaction ----
  function wire(key, v) {
    const cv = v.cv;
    const pos = (e) => { const r = cv.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
    cv.addEventListener("pointerdown", (e) => {
      const [px, py] = pos(e);
      if (key.startsWith("latent")) {
        const h = v.hit?.handle(px, py);
        if (h) { st.drag = { key, ...h }; cv.setPointerCapture(e.pointerId); e.preventDefault(); return; }
      }
      if (v.timeScale && v.timeScale.box.l <= px && px <= v.timeScale.box.r) {
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
  }
  function sendMove(d) {
    st.lastSend = performance.now();
    const z = d.z.map((v) => Math.max(-1000, Math.min(1000, v)));
    app.send({ op: "move", layer: d.layer, index: d.handle, z });
  }

  // ---- views ----
  function drawLatent(li, v, f, n) {
    const L = f.layers[li], D = L.d, next = f.layers[li + 1];
    const { ctx, w, h } = sizeCanvas(v.cv);
    const pairs = D >= 3 ? [[0, 1], [0, 2], [1, 2]] : D === 2 ? [[0, 1]] : [[0, 0]];
    const gap = 12, pw = (w - gap * (pairs.length - 1)) / pairs.length;
    const any = anyLit();
    let count = 0;
    v.hit = { proj: [], handle: null, point: null };
    pairs.forEach(([a, b], pi) => {
      const x0p = pi * (pw + gap);
      const box = { l: x0p + PAD.l, r: x0p + pw - 4, t: PAD.t, b: h - PAD.b - CB };
      let xa = Infinity, xb = -Infinity, ya = Infinity, yb = -Infinity;
      const T = st.showTest ? st.testH?.[li] : null; // held-out scans: predicted from time alone
      for (let i = 0; i < n + (T && T.d === D ? T.n : 0); i++) {
        const M = i < n ? L.mean : T.mean, j = i < n ? i : i - n;
        const x = M[j * D + a], y = M[j * D + b];
        xa = Math.min(xa, x); xb = Math.max(xb, x); ya = Math.min(ya, y); yb = Math.max(yb, y);
      }
      const px = 0.08 * (xb - xa || 1), py = 0.08 * (yb - ya || 1);
      const s = scale(box, xa - px, xb + px, ya - py, yb + py, true);
      v.hit.proj.push({ s, a, b });
      axes(ctx, s, `h${li + 1}[${a}]`, `h${li + 1}[${b}]`, { xt: 3, yt: 3 });
      ctx.save();
      ctx.beginPath(); ctx.rect(box.l, box.t, box.r - box.l, box.b - box.t); ctx.clip();
      // halos (±2 sd in each projected dimension) and points, batched by
      // colour bin: one fill per bin keeps a frame well under 16 ms.
      const bins = NB, hp = palette(bins, 0.1), pp = palette(bins, 0.95), bb = byBin();
      for (let k = 0; k < bins; k++) {
        ctx.beginPath();
        for (const i of bb[k]) {
          if (i >= n || (any && !lit(i))) continue;
          const x = L.mean[i * D + a], y = L.mean[i * D + b], cx = s.sx(x), cy = s.sy(y);
          const rx = Math.max(0.5, Math.abs(s.sx(x + 2 * Math.sqrt(Math.max(0, L.var[i * D + a]))) - cx));
          const ry = Math.max(0.5, Math.abs(s.sy(y + 2 * Math.sqrt(Math.max(0, L.var[i * D + b]))) - cy));
          ctx.moveTo(cx + rx, cy); ctx.ellipse(cx, cy, rx, ry, 0, 0, 6.2832);
        }
        ctx.fillStyle = hp[k]; ctx.fill();
      }
      ctx.strokeStyle = "rgba(60,60,60,0.18)"; ctx.lineWidth = 1;
      ctx.beginPath();
      for (let i = 0; i < n; i++) ctx.lineTo(s.sx(L.mean[i * D + a]), s.sy(L.mean[i * D + b]));
      ctx.stroke();
      drawRevisits(ctx, (i) => s.sx(L.mean[i * D + a]), (i) => s.sy(L.mean[i * D + b]));
      for (let k = 0; k < bins; k++) {
        ctx.beginPath();
        for (const i of bb[k]) {
          if (i >= n || (any && !lit(i))) continue;
          const cx = s.sx(L.mean[i * D + a]), cy = s.sy(L.mean[i * D + b]);
          ctx.moveTo(cx + 2.7, cy); ctx.arc(cx, cy, 2.7, 0, 6.2832);
        }
        ctx.fillStyle = pp[k]; ctx.fill();
      }
      if (any) {
        ctx.beginPath();
        for (let i = 0; i < n; i++) {
          if (lit(i)) continue;
          const cx = s.sx(L.mean[i * D + a]), cy = s.sy(L.mean[i * D + b]);
          ctx.moveTo(cx + 2.4, cy); ctx.arc(cx, cy, 2.4, 0, 6.2832);
        }
        ctx.fillStyle = "rgba(160,170,180,0.35)"; ctx.fill();
        ctx.beginPath();
        for (let i = 0; i < n; i++) {
          if (!lit(i)) continue;
          const cx = s.sx(L.mean[i * D + a]), cy = s.sy(L.mean[i * D + b]);
          ctx.moveTo(cx + 3.4, cy); ctx.arc(cx, cy, 3.4, 0, 6.2832);
          if (pi === 0) count++;
        }
        ctx.strokeStyle = "#111"; ctx.lineWidth = 1; ctx.stroke();
      }
      // held-out scans, hollow, in the same time colours
      if (T && T.d === D) {
        for (let k = 0; k < bins; k++) {
          ctx.beginPath();
          for (const i of bb[k]) {
            if (i < n || (any && !lit(i))) continue;
            const cx = s.sx(T.mean[(i - n) * D + a]), cy = s.sy(T.mean[(i - n) * D + b]);
            ctx.moveTo(cx + 2.6, cy); ctx.arc(cx, cy, 2.6, 0, 6.2832);
          }
          ctx.strokeStyle = pp[k]; ctx.lineWidth = 1.2; ctx.stroke();
        }
      }
      // inducing inputs of the next layer live in this space: draggable
      if (next && next.q === D) {
        for (let k = 0; k < next.m; k++) {
          const dz = st.drag && st.drag.layer === li + 1 && st.drag.handle === k ? st.drag.z : null;
          const zx = dz ? dz[a] : next.z[k * D + a], zy = dz ? dz[b] : next.z[k * D + b];
          const hx = s.sx(zx), hy = s.sy(zy), r = 4.5;
          ctx.beginPath(); ctx.moveTo(hx, hy - r); ctx.lineTo(hx + r, hy); ctx.lineTo(hx, hy + r); ctx.lineTo(hx - r, hy); ctx.closePath();
          ctx.fillStyle = dz ? "#c2410c" : "rgba(234,88,12,0.85)"; ctx.fill(); ctx.strokeStyle = "#fff"; ctx.stroke();
        }
      }
      ctx.restore();
    });
    // The shared time scale's colour bar, under the projections.
    const tmax = times()[R().n_all - 1];
    colorBar(ctx, PAD.l, h - CB + 2, w - PAD.l - PAD.r, 7, "0 s", `${fmt(tmax)} s`, "time (● training, ○ held-out scans)");
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
    v.hit.point = (px, py) => nearestPoint(n, v.hit.proj, (p, i) => [p.s.sx(L.mean[i * D + p.a]), p.s.sy(L.mean[i * D + p.b])], px, py);
    const sc = f.robot?.scores?.[li];
    setText(v.title, `Hidden layer ${li + 1} (h${li + 1}): message means coloured by time, halos ±2 sd${st.showTest && st.testH ? ", ○ held-out scans (predicted from time alone)" : ""}, ◆ layer ${li + 2}'s inducing inputs (drag)` +
      (sc != null ? ` · geometry score ${sc.toFixed(3)}` : ""));
    v.cv.dataset.highlighted = String(count);
  }

  function nearestPoint(n, projs, at, px, py) {
    let best = -1, bd = 64;
    for (const p of projs) {
      if (px < p.s.box.l || px > p.s.box.r) continue;
      for (let i = 0; i < n; i++) {
        const [x, y] = at(p, i);
        const d = (x - px) ** 2 + (y - py) ** 2;
        if (d < bd) { bd = d; best = i; }
      }
    }
    return best;
  }

  function drawPath(v) {
    const s0 = S(), r = R(), nAll = r.n_all, P = r.positions;
    const { ctx, w, h } = sizeCanvas(v.cv);
    let xa = Infinity, xb = -Infinity, ya = Infinity, yb = -Infinity;
    for (let i = 0; i < nAll; i++) { xa = Math.min(xa, P[2 * i]); xb = Math.max(xb, P[2 * i]); ya = Math.min(ya, P[2 * i + 1]); yb = Math.max(yb, P[2 * i + 1]); }
    const s = scale({ l: PAD.l, r: w - PAD.r, t: PAD.t, b: h - PAD.b - 26 }, xa - 1, xb + 1, ya - 1, yb + 1, true);
    axes(ctx, s, "x (m)", "y (m)");
    const any = anyLit();
    let count = 0;
    ctx.strokeStyle = "rgba(60,60,60,0.2)"; ctx.beginPath();
    for (let i = 0; i < nAll; i++) ctx.lineTo(s.sx(P[2 * i]), s.sy(P[2 * i + 1]));
    ctx.stroke();
    drawRevisits(ctx, (i) => s.sx(P[2 * i]), (i) => s.sy(P[2 * i + 1]));
    const pp = palette(NB, 0.95), bb = byBin();
    for (let k = 0; k < NB; k++) {
      const fillP = new Path2D(), ringP = new Path2D();
      for (const i of bb[k]) {
        if (any && !lit(i)) continue;
        const x = s.sx(P[2 * i]), y = s.sy(P[2 * i + 1]), p = i < s0.n ? fillP : ringP;
        p.moveTo(x + 3, y); p.arc(x, y, 3, 0, 6.2832);
      }
      ctx.fillStyle = pp[k]; ctx.fill(fillP);
      ctx.strokeStyle = pp[k]; ctx.lineWidth = 1.4; ctx.stroke(ringP);
    }
    if (any) {
      const off = new Path2D(), on = new Path2D();
      for (let i = 0; i < nAll; i++) {
        const x = s.sx(P[2 * i]), y = s.sy(P[2 * i + 1]);
        if (lit(i)) { on.moveTo(x + 4, y); on.arc(x, y, 4, 0, 6.2832); count++; } else { off.moveTo(x + 2.5, y); off.arc(x, y, 2.5, 0, 6.2832); }
      }
      ctx.fillStyle = "rgba(160,170,180,0.35)"; ctx.fill(off);
      ctx.strokeStyle = "#111"; ctx.lineWidth = 1; ctx.stroke(on);
    }
    ctx.fillStyle = "#1f2933"; ctx.textAlign = "left"; ctx.textBaseline = "bottom";
    ctx.fillText("start", s.sx(P[0]) + 6, s.sy(P[1]) - 4);
    const cb = { l: PAD.l, r: w - PAD.r };
    colorBar(ctx, cb.l, h - 30, cb.r - cb.l, 9, "0 s", `${fmt(times()[nAll - 1])} s`, "time (● training, ○ test scans)");
    v.hit = { point: (px, py) => nearestPoint(nAll, [{ s }], (p, i) => [s.sx(P[2 * i]), s.sy(P[2 * i + 1])], px, py) };
    v.timeScale = scale({ l: cb.l, r: cb.r, t: h - 30, b: h - 21 }, 0, times()[nAll - 1], 0, 1);
    v.cv.dataset.highlighted = String(count);
  }

  function drawSignals(v, f) {
    const s0 = S(), r = R(), n = s0.n, nAll = r.n_all, d = s0.d, ts = times();
    const j = st.ap < 0 ? defaultAP() : st.ap;
    if (st.ap < 0) { st.ap = j; v.select.value = String(j); }
    const { ctx, w, h } = sizeCanvas(v.cv);
    const tmax = ts[nAll - 1];
    const s = scale({ l: PAD.l + 8, r: w - PAD.r, t: PAD.t, b: h - PAD.b - 22 }, -0.01 * tmax, 1.01 * tmax, -95, Math.max(-40, yMax(j)));
    axes(ctx, s, "", "dBm", { xt: 10, yt: 5 });
    const band = (k0, k1, mean, vr, off) => {
      if (!mean) return;
      ctx.beginPath();
      for (let i = k0; i < k1; i++) ctx.lineTo(s.sx(ts[i]), s.sy(dbm(j, mean[(i - off) * d + j]) + 2 * sdDbm(j, vr[(i - off) * d + j])));
      for (let i = k1 - 1; i >= k0; i--) ctx.lineTo(s.sx(ts[i]), s.sy(dbm(j, mean[(i - off) * d + j]) - 2 * sdDbm(j, vr[(i - off) * d + j])));
      ctx.closePath(); ctx.fillStyle = "rgba(37,99,235,0.18)"; ctx.fill();
      ctx.beginPath();
      for (let i = k0; i < k1; i++) ctx.lineTo(s.sx(ts[i]), s.sy(dbm(j, mean[(i - off) * d + j])));
      ctx.strokeStyle = "#1d4ed8"; ctx.lineWidth = 1.8; ctx.stroke();
    };
    // brushed range
    if (active()) {
      ctx.fillStyle = "rgba(234,179,8,0.16)";
      const a = s.sx(ts[st.sel.lo]) - 2, b = s.sx(ts[st.sel.hi]) + 2;
      ctx.fillRect(a, s.box.t, b - a, s.box.b - s.box.t);
    }
    band(0, n, st.out, st.outVar, 0);
    ctx.setLineDash([4, 3]);
    band(n, nAll, st.test, st.testVar, n);
    ctx.setLineDash([]);
    // the split
    const xs = (s.sx(ts[n - 1]) + s.sx(ts[n])) / 2;
    ctx.strokeStyle = "#64748b"; ctx.setLineDash([2, 3]); ctx.beginPath(); ctx.moveTo(xs, s.box.t); ctx.lineTo(xs, s.box.b); ctx.stroke(); ctx.setLineDash([]);
    ctx.fillStyle = "#475569"; ctx.textBaseline = "top";
    ctx.textAlign = "right"; ctx.fillText("training scans ◀", xs - 4, s.box.t + 2);
    ctx.textAlign = "left"; ctx.fillText("▶ held-out test scans", xs + 4, s.box.t + 2);
    const any = anyLit();
    let count = 0;
    const dots = new Path2D(), dotsOff = new Path2D(), fills = new Path2D(), fillsOff = new Path2D(), rings = new Path2D();
    for (let i = 0; i < nAll; i++) {
      const yv = i < n ? s0.y[i * d + j] : r.y_test[(i - n) * d + j];
      const x = s.sx(ts[i]), y = s.sy(dbm(j, yv));
      const on = lit(i), dim = any && !on;
      const p = r.filled[i * d + j] > 0.5 ? (dim ? fillsOff : fills) : (dim ? dotsOff : dots);
      p.moveTo(x + 2.4, y); p.arc(x, y, 2.4, 0, 6.2832);
      if (on) { count++; rings.moveTo(x + 3.6, y); rings.arc(x, y, 3.6, 0, 6.2832); }
    }
    ctx.lineWidth = 1;
    ctx.fillStyle = "#111827"; ctx.fill(dots);
    ctx.fillStyle = "rgba(17,24,39,0.25)"; ctx.fill(dotsOff);
    ctx.strokeStyle = "#94a3b8"; ctx.stroke(fills);
    ctx.strokeStyle = "rgba(148,163,184,0.4)"; ctx.stroke(fillsOff);
    ctx.strokeStyle = "#ca8a04"; ctx.lineWidth = 1.3; ctx.stroke(rings);
    const cb = { l: s.box.l, r: s.box.r };
    colorBar(ctx, cb.l, h - 30, cb.r - cb.l, 9, "0 s", `${fmt(tmax)} s`, "time (s) — drag here or on the plot to brush a time range; click to clear");
    v.timeScale = s;
    v.cv.dataset.highlighted = String(count);
    setText(v.title, `Signal strength of access point ${j + 1} (${s0.output_names[j]}): data ●, −92 dBm fill-ins ○, posterior mean and ±2 sd (dashed: test scans)`);
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

  function drawPenalties(v, f) {
    const s0 = S(), r = R(), n = s0.n, nAll = r.n_all, ts = times();
    const { ctx, w, h } = sizeCanvas(v.cv);
    const L = f.layers;
    if (!L[0].comp) { v.cv.dataset.highlighted = "0"; return; }
    let top = 0;
    const tot = new Float64Array(n);
    for (let i = 0; i < n; i++) { for (const l of L) tot[i] += (l.comp?.[i] ?? 0) + (l.prop?.[i] ?? 0); top = Math.max(top, tot[i]); }
    const tmax = ts[nAll - 1];
    const s = scale({ l: PAD.l + 8, r: w - PAD.r, t: PAD.t, b: h - PAD.b - 22 }, -0.01 * tmax, 1.01 * tmax, 0, top * 1.05 || 1);
    axes(ctx, s, "", "nats", { xt: 10, yt: 4 });
    if (active()) {
      ctx.fillStyle = "rgba(234,179,8,0.16)";
      const a = s.sx(ts[st.sel.lo]) - 2, b = s.sx(ts[Math.min(st.sel.hi, nAll - 1)]) + 2;
      ctx.fillRect(a, s.box.t, b - a, s.box.b - s.box.t);
    }
    // stacked areas, one polygon per layer and term
    const any = anyLit();
    let count = 0;
    for (let i = 0; i < n; i++) if (lit(i)) count++;
    const base = new Float64Array(n);
    L.forEach((l, li) => {
      for (const [arr, alpha] of [[l.comp, 1], [l.prop, 0.45]]) {
        if (!arr) continue;
        ctx.beginPath();
        for (let i = 0; i < n; i++) ctx.lineTo(s.sx(ts[i]), s.sy(base[i] + Math.max(0, arr[i])));
        for (let i = n - 1; i >= 0; i--) ctx.lineTo(s.sx(ts[i]), s.sy(base[i]));
        ctx.closePath();
        ctx.globalAlpha = any ? 0.55 * alpha : alpha;
        ctx.fillStyle = LAYER_COL[li % LAYER_COL.length]; ctx.fill();
        for (let i = 0; i < n; i++) base[i] += Math.max(0, arr[i]);
      }
    });
    ctx.globalAlpha = 1;
    if (any) { // the highlighted scans' totals as ticks on top
      ctx.beginPath();
      for (let i = 0; i < n; i++) if (lit(i)) { const x = s.sx(ts[i]); ctx.moveTo(x, s.sy(base[i])); ctx.lineTo(x, s.sy(0)); }
      ctx.strokeStyle = "rgba(17,24,39,0.55)"; ctx.lineWidth = 1; ctx.stroke();
    }
    ctx.globalAlpha = 1;
    colorBar(ctx, s.box.l, h - 30, s.box.r - s.box.l, 9, "0 s", `${fmt(tmax)} s`, "time (s), training scans");
    // legend
    ctx.textAlign = "left"; ctx.textBaseline = "middle";
    let lx = s.box.l + 8;
    L.forEach((l, li) => {
      for (const [nm, alpha] of [["compression", 1], ["propagation", 0.45]]) {
        ctx.globalAlpha = alpha; ctx.fillStyle = LAYER_COL[li % LAYER_COL.length]; ctx.fillRect(lx, s.box.t + 6, 10, 8); ctx.globalAlpha = 1;
        ctx.fillStyle = "#334155"; const t = `layer ${li + 1} ${nm}`; ctx.fillText(t, lx + 13, s.box.t + 10); lx += ctx.measureText(t).width + 24;
      }
    });
    v.timeScale = s;
    v.cv.dataset.highlighted = String(count);
  }

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

  // The panel: its drawing, and selection and statistics for tests and
  // tours (window.dgpviz.panels.robot).
  return {
    select(lo, hi) { st.sel = { lo, hi }; app.redraw(); },
    clear() { st.sel = { lo: -1, hi: -1 }; st.hover = -1; app.redraw(); },
    get sel() { return { ...st.sel, hover: st.hover }; },
    hover(i) { st.hover = i; app.redraw(); },
    revisitsOf: (i) => partners()[i]?.slice() ?? [],
    stats: st.stats,
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
      if (f.robot?.new_output && last.mean && f !== st.lastFrame) { st.out = last.mean; st.outVar = last.var; }
      if (f.robot?.test && f !== st.lastFrame) { st.test = f.robot.test.mean; st.testVar = f.robot.test.var; st.testH = f.robot.test_hidden; }
      st.lastFrame = f;
      const n = state.setup.n, nh = f.layers.length - 1;
      for (let li = 0; li < 2; li++) {
        const v = views[`latent-${li}`];
        v.root.hidden = li >= nh || !f.layers[li].mean;
        if (!v.root.hidden) drawLatent(li, v, f, n);
      }
      drawPath(views.path);
      drawSignals(views.signals, f);
      drawPenalties(views.penalties, f);
      readout(f);
      performance.measure("robot-draw", "robot-draw-start");
      st.stats.draws++;
    },
  };
});
