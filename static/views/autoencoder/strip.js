// The strip: the rows in order (the frames of the video), coloured as in
// the map, with the lit stretch framed and the hovered row marked; drag
// along it to light up a stretch.
import { Plot, canvasPoint } from "../../plot.js";
import { gradient } from "../../colormap.js";

// createStrip draws on cv for data (data.js); env: {setRange(a, b)}.
export function createStrip(cv, data, env) {
  const plot = new Plot(cv, { l: 62, r: 14, t: 4, b: 16 });
  let scale = null, from = null; // from: where a drag started
  cv.addEventListener("pointerdown", (ev) => {
    if (!scale) return;
    cv.setPointerCapture(ev.pointerId);
    from = scale.ix(canvasPoint(cv, ev)[0]);
    env.setRange(from, from);
  });
  cv.addEventListener("pointermove", (ev) => { if (from !== null && scale) env.setRange(from, scale.ix(canvasPoint(cv, ev)[0])); });
  cv.addEventListener("pointerup", () => { from = null; });
  return {
    // draw: m = {n, lit: {from, to}, hover}.
    draw(m) {
      if (!plot.begin()) return;
      const n = m.n, { w, h } = plot, { from: a, to: b } = m.lit, one = data.row.one;
      const s = (scale = plot.area(-0.5, n - 0.5, 0, 1, { l: plot.m.l, r: w - plot.m.r, t: plot.m.t, b: h - plot.m.b }));
      const ctx = plot.ctx, bh = s.box.b - s.box.t;
      ctx.fillStyle = gradient(ctx, s.box.l, s.box.r); ctx.fillRect(s.box.l, s.box.t, s.box.r - s.box.l, bh);
      if (a >= 0) {
        ctx.fillStyle = "rgba(255,255,255,0.72)";
        ctx.fillRect(s.box.l, s.box.t, s.sx(a - 0.5) - s.box.l, bh);
        ctx.fillRect(s.sx(b + 0.5), s.box.t, s.box.r - s.sx(b + 0.5), bh);
        ctx.strokeStyle = "#111827"; ctx.lineWidth = 1.5;
        ctx.strokeRect(s.sx(a - 0.5), s.box.t + 0.5, s.sx(b + 0.5) - s.sx(a - 0.5), bh - 1);
      }
      if (m.hover >= 0) { ctx.fillStyle = "#111827"; ctx.fillRect(s.sx(m.hover) - 1, s.box.t - 3, 2, bh + 6); }
      ctx.fillStyle = "#5f6b7a"; ctx.textBaseline = "top"; ctx.textAlign = "left"; ctx.fillText(`${one} 1`, s.box.l, s.box.b + 2);
      ctx.textAlign = "right"; ctx.fillText(`${one} ${n}`, s.box.r, s.box.b + 2);
      ctx.textAlign = "center";
      ctx.fillText(a >= 0 ? `${data.row.many} ${a + 1}–${b + 1} lit` : `${data.row.all}, in order`, (s.box.l + s.box.r) / 2, s.box.b + 2);
      ctx.textAlign = "right"; ctx.textBaseline = "middle"; ctx.fillText(data.row.all.replace(/^the /, ""), s.box.l - 6, (s.box.t + s.box.b) / 2);
    },
  };
}
