// The autoencoder's latent map: one point per row at its latent message
// mean, coloured by its place in the data (colour.js), its variance as a
// faint halo, the tiles under the points (tiles.js), the decoder's
// inducing inputs as diamonds one can drag (the "move" op; the optimizer
// pauses meanwhile), a lit stretch of rows joined in order, the hovered
// row ringed and the cursor, whose place the faces beside decode.
import { Plot, StickyRange, canvasPoint, getDrawScale } from "../../plot.js";
import { byColour, discs, ellipses, rows, diamonds, clipTo } from "../marks.js";

// createMap draws on cv; env: {send, redraw, running() (the optimizer
// runs), setCursor(x, y), setHover(i)}.
export function createMap(cv, env) {
  const plot = new Plot(cv, { l: 62, r: 14, t: 10, b: 74 });
  const xr = new StickyRange(), yr = new StickyRange();
  let scale = null, last = null; // the last draw's scale and {frame, lit}
  let drag = null, pendingMove = null, moveScheduled = false, pressing = false;

  const decoder = () => { const L = last?.frame.layers; return L?.[L.length - 1]; };
  function handleAt(px, py) {
    const L = decoder();
    if (!scale || !L || L.q !== 2 || !L.z?.length) return -1;
    let best = -1, bd = 9 * 9;
    for (let j = 0; j < L.m; j++) {
      const dx = scale.sx(L.z[2 * j]) - px, dy = scale.sy(L.z[2 * j + 1]) - py, d2 = dx * dx + dy * dy;
      if (d2 < bd) { bd = d2; best = j; }
    }
    return best;
  }
  function pointAt(px, py) {
    const L0 = last?.frame.layers[0];
    if (!scale || !L0?.mean) return -1;
    const mean = L0.mean, dq = L0.d, { from, to } = last.lit;
    let best = -1, bd = 5 * 5;
    for (let i = 0; i < last.n; i++) {
      if (from >= 0 && (i < from || i > to)) continue;
      const dx = scale.sx(mean[i * dq]) - px, dy = scale.sy(mean[i * dq + 1]) - py, d2 = dx * dx + dy * dy;
      if (d2 < bd) { bd = d2; best = i; }
    }
    return best;
  }
  const inBox = (px, py) => scale && px >= scale.box.l && px <= scale.box.r && py >= scale.box.t && py <= scale.box.b;
  const setCursor = (px, py) => { if (inBox(px, py)) env.setCursor(scale.ix(px), scale.iy(py)); };
  const flushMove = () => {
    moveScheduled = false;
    if (pendingMove) { env.send(pendingMove); pendingMove = null; }
  };

  cv.addEventListener("pointerdown", (ev) => {
    const [px, py] = canvasPoint(cv, ev), k = handleAt(px, py);
    cv.setPointerCapture(ev.pointerId);
    if (k >= 0) {
      const z = decoder().z;
      drag = { index: k, z: [z[2 * k], z[2 * k + 1]], off: [z[2 * k] - scale.ix(px), z[2 * k + 1] - scale.iy(py)], wasRunning: env.running() };
      if (drag.wasRunning) env.send({ op: "pause" });
      return;
    }
    pressing = true;
    setCursor(px, py);
  });
  cv.addEventListener("pointermove", (ev) => {
    const [px, py] = canvasPoint(cv, ev);
    if (drag) {
      drag.z = [scale.ix(px) + drag.off[0], scale.iy(py) + drag.off[1]];
      pendingMove = { op: "move", layer: last.frame.layers.length - 1, index: drag.index, z: drag.z };
      if (!moveScheduled) { moveScheduled = true; requestAnimationFrame(flushMove); }
      env.redraw();
      return;
    }
    const k = handleAt(px, py);
    cv.style.cursor = k >= 0 ? "grab" : "crosshair";
    cv.title = k >= 0 ? `Decoder inducing input ${k + 1}: drag to move it (the function stays; watch the bound)` : "";
    const i = pointAt(px, py);
    if (i !== last?.hover) { env.setHover(i); cv.dataset.hover = String(i); }
    setCursor(px, py);
  });
  const endDrag = () => {
    pressing = false;
    if (!drag) return;
    flushMove();
    if (drag.wasRunning) env.send({ op: "play" });
    drag = null;
    env.redraw();
  };
  cv.addEventListener("pointerup", endDrag);
  cv.addEventListener("pointercancel", endDrag);
  cv.addEventListener("pointerleave", () => { if (!pressing && last?.hover >= 0) env.setHover(-1); });

  return {
    // ranges are the map's axes' ranges (for the tiles), or null before a draw.
    ranges: () => (scale ? { xr, yr } : null),
    // screen returns latent (x, y) in CSS pixels of the map, or null.
    screen(x, y) { const k = getDrawScale(); return scale ? [k * scale.sx(x), k * scale.sy(y)] : null; },
    // handle returns decoder inducing input j in CSS pixels of the map.
    handle(j) {
      const L = decoder();
      if (!scale || !L?.z?.length || L.q !== 2) return null;
      const k = getDrawScale(); // drawing units → CSS pixels (presentation)
      return [k * scale.sx(L.z[2 * j]), k * scale.sy(L.z[2 * j + 1])];
    },
    reset() { xr.reset(); yr.reset(); scale = null; },
    // draw: m = {frame, n (rows), colour, lit: {from, to}, hover, cursor, tiles}.
    draw(m) {
      last = m;
      if (!plot.begin()) return;
      const f = m.frame, L0 = f.layers[0], dq = L0.d, n = m.n, mean = L0.mean, vr = L0.var;
      const dec = f.layers[f.layers.length - 1], ctx = plot.ctx;
      if (!mean || dq < 2) {
        ctx.fillStyle = "#5f6b7a"; ctx.fillText(dq < 2 ? "The latent map needs a hidden layer of width 2 or more." : "waiting for the model…", 60, 30);
        return;
      }
      const zs = dec.q === 2 && dec.z?.length ? dec.m : 0; // the decoder's inducing inputs
      let xa = Infinity, xb = -Infinity, ya = Infinity, yb = -Infinity;
      const grow = (x, y) => { if (x < xa) xa = x; if (x > xb) xb = x; if (y < ya) ya = y; if (y > yb) yb = y; };
      for (let i = 0; i < n; i++) grow(mean[i * dq], mean[i * dq + 1]);
      for (let j = 0; j < zs; j++) grow(dec.z[2 * j], dec.z[2 * j + 1]);
      const px = 0.06 * (xb - xa || 1), py = 0.06 * (yb - ya || 1);
      xr.update(xa - px, xb + px, !!drag); yr.update(ya - py, yb + py, !!drag);
      const { w, h } = plot;
      const s = (scale = plot.area(xr.lo, xr.hi, yr.lo, yr.hi, { l: plot.m.l, r: w - plot.m.r, t: plot.m.t, b: h - plot.m.b }, { equal: true }));
      plot.axes({ xlabel: "", ylabel: "latent dimension 2", xgrid: false, ygrid: false });
      ctx.fillStyle = "#1f2933"; ctx.textAlign = "center"; ctx.textBaseline = "top";
      ctx.fillText("latent dimension 1", (s.box.l + s.box.r) / 2, s.box.b + 20);
      const { from, to } = m.lit, any = from >= 0, lit = (i) => !any || (i >= from && i <= to);
      const X = (i) => s.sx(mean[i * dq]), Y = (i) => s.sy(mean[i * dq + 1]), all = rows(0, n);
      let tiles = 0;
      clipTo(ctx, s.box, () => {
        // halos: ±2 sd of each row's message (the mean of the two
        // dimensions' variances), those larger than a dot
        const k = s.sx(1) - s.sx(0);
        const r = (i) => { const x = 2 * Math.sqrt(Math.max(0, (vr[i * dq] + vr[i * dq + 1]) / 2)) * k; return x > 2.5 ? Math.min(x, 60) : null; };
        ellipses(ctx, all, X, Y, r, r, "rgba(120,130,150,0.07)", lit);
        tiles = m.tiles.draw(ctx, s, any);
        if (any) { // the lit stretch in order, as a line
          ctx.beginPath();
          for (let i = from; i <= to; i++) ctx.lineTo(X(i), Y(i));
          ctx.strokeStyle = "rgba(17,24,39,0.55)"; ctx.lineWidth = 1; ctx.stroke();
        }
        // the points, large enough to see from the back of a hall,
        // smaller when they are many
        byColour(ctx, m.colour, X, Y, (any ? 1.3 : 1) * (n > 500 ? 2.8 : 3.6), lit);
        if (any) discs(ctx, all, X, Y, 1.6, "rgba(148,163,184,0.55)", (i) => !lit(i));
        if (m.hover >= 0 && m.hover < n) {
          ctx.beginPath(); ctx.arc(X(m.hover), Y(m.hover), 6, 0, 2 * Math.PI);
          ctx.strokeStyle = "#111827"; ctx.lineWidth = 2; ctx.stroke();
        }
        const pts = []; // the decoder's inducing inputs (the dragged one hot)
        for (let j = 0; j < zs; j++) if (!drag || drag.index !== j) pts.push(s.sx(dec.z[2 * j]), s.sy(dec.z[2 * j + 1]));
        diamonds(ctx, pts, 6.5, "#dc2626", 1.5, "#fff");
        if (drag) diamonds(ctx, [s.sx(drag.z[0]), s.sy(drag.z[1])], 8, "#f97316", 1.5, "#fff");
        if (m.cursor) {
          const x = s.sx(m.cursor.x), y = s.sy(m.cursor.y);
          ctx.beginPath(); ctx.moveTo(x - 9, y); ctx.lineTo(x - 3, y); ctx.moveTo(x + 3, y); ctx.lineTo(x + 9, y);
          ctx.moveTo(x, y - 9); ctx.lineTo(x, y - 3); ctx.moveTo(x, y + 3); ctx.lineTo(x, y + 9);
          ctx.strokeStyle = "#1d4ed8"; ctx.lineWidth = 1.5; ctx.stroke();
        }
      });
      m.colour.bar(ctx, s.box.l, h - 34, s.box.r - s.box.l, 12, true);
      cv.dataset.tiles = String(tiles); // tiles on the map now
      cv.dataset.points = String(n);
      cv.dataset.inducing = String(zs);
    },
  };
}
