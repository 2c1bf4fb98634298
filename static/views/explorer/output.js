// One output over the input (any of them: a menu chooses; for the robot,
// one access point's signal): the data (stand-ins for missing readings hollow,
// where the data have them), the model's posterior mean and ±2 sd at the
// training rows and, dashed, at the held-out rows. Its time axis brushes a
// time range. It is drawn again only when the analysis, the output, the
// selection or its size changes.
import { Plot, withUnit } from "../../plot.js";
import { StaticLayer, sizeKey } from "../layer.js";
import { el, setText, viewBox } from "../dom.js";
import { discs, rings, rows, clipTo } from "../marks.js";
import { wireTimeBrush, brushBand, timeBar } from "./link.js";

const DATA = "17,24,39", FILLIN = "148,163,184", GOLD = "rgb(202,138,4)"; // data, stand-ins, the lit ones' rings

// createOutput makes the view for data (data.js); env: {link, redraw}.
export function createOutput(data, { link, redraw }) {
  const menu = el("select", { "data-testid": "explorer-ap", title: data.outputNoun });
  for (let j = 0; j < data.d; j++) menu.add(new Option(data.outputLabel(j), String(j)));
  const box = viewBox("signals", `One output over ${data.input.word}`, "signals", [el("label", { class: "ap" }, "Output ", menu)]);
  const cv = box.cv, plot = new Plot(cv, { l: 56, r: 12, t: 18, b: 30 }), layer = new StaticLayer("explorer-signals");
  let j = mostObserved(data), drawn = "", axis = null;
  menu.value = String(j);
  menu.addEventListener("change", () => { j = Number(menu.value); redraw(); });
  wireTimeBrush(cv, link, () => data.input.values, () => axis);
  const filled = data.filled ? (i) => data.filled(i, j) : () => false;

  return {
    root: box.root, cv,
    // draw: m = {colour, byTime, sel, fit: {count (analyses received),
    // out, outVar (the output layer's message), test, testVar (at the
    // held-out rows)}}.
    draw(m) {
      const { colour, sel, fit } = m, n = data.n, nAll = data.nAll, ts = data.input.values;
      const key = `${sizeKey(cv)}|${j}|${fit.count}|${m.byTime}|${sel.key}`;
      if (drawn === key) return;
      if (!plot.begin(false)) return; // the static layer replaces every pixel
      drawn = key;
      const { w, h } = plot, d = data.d;
      const t0 = ts[0], t1 = ts[nAll - 1], pad = 0.01 * (t1 - t0 || 1);
      let ylo = Infinity, yhi = -Infinity;
      for (let i = 0; i < nAll; i++) { const y = data.output(j, i); if (y < ylo) ylo = y; if (y > yhi) yhi = y; }
      const ypad = 0.1 * (yhi - ylo || 1);
      const s = plot.area(t0 - pad, t1 + pad, ylo - ypad, yhi + ypad, { l: plot.m.l, r: w - plot.m.r, t: plot.m.t, b: h - plot.m.b - 22 });
      const X = (i) => s.sx(ts[i]), Y = (i) => s.sy(data.output(j, i));
      const any = sel.any, all = rows(0, nAll);
      // scans draws the rows keep accepts: data ●, stand-ins ○
      const scans = (ctx, keep, alpha) => {
        discs(ctx, all, X, Y, 2.4, `rgba(${DATA},${alpha[0]})`, (i) => keep(i) && !filled(i));
        rings(ctx, all, X, Y, 2.4, 1, `rgba(${FILLIN},${alpha[1]})`, (i) => keep(i) && filled(i));
      };
      layer.draw(plot, `${j}|${fit.count}|${any}|${m.byTime}`, (ctx) => {
        plot.axes({ ylabel: withUnit(data.outputName(j), data.unit) });
        // the posterior mean and ±2 sd (mean, vr: rows k0 … k1 − 1 from row off)
        const band = (k0, k1, mean, vr, off) => {
          if (!mean || k1 <= k0) return;
          const mu = (i) => data.outputOf(j, mean[(i - off) * d + j]), sd = (i) => 2 * data.outputSD(j, vr[(i - off) * d + j]);
          ctx.beginPath();
          for (let i = k0; i < k1; i++) ctx.lineTo(X(i), s.sy(mu(i) + sd(i)));
          for (let i = k1 - 1; i >= k0; i--) ctx.lineTo(X(i), s.sy(mu(i) - sd(i)));
          ctx.closePath(); ctx.fillStyle = "rgba(37,99,235,0.18)"; ctx.fill();
          ctx.beginPath();
          for (let i = k0; i < k1; i++) ctx.lineTo(X(i), s.sy(mu(i)));
          ctx.strokeStyle = "#1d4ed8"; ctx.lineWidth = 1.8; ctx.stroke();
        };
        clipTo(ctx, s.box, () => {
          band(0, n, fit.out, fit.outVar, 0);
          ctx.setLineDash([4, 3]);
          band(n, nAll, fit.test, fit.testVar, n);
          ctx.setLineDash([]);
        });
        if (data.test) { // the split
          const xs = (X(n - 1) + X(n)) / 2;
          ctx.strokeStyle = "#64748b"; ctx.lineWidth = 1; ctx.setLineDash([2, 3]);
          ctx.beginPath(); ctx.moveTo(xs, s.box.t); ctx.lineTo(xs, s.box.b); ctx.stroke(); ctx.setLineDash([]);
          ctx.fillStyle = "#475569"; ctx.textBaseline = "top";
          ctx.textAlign = "right"; ctx.fillText(`training ${data.row.many} ◀`, xs - 4, s.box.t + 2);
          ctx.textAlign = "left"; ctx.fillText(`▶ held-out ${data.row.many}`, xs + 4, s.box.t + 2);
        }
        scans(ctx, () => true, any ? [0.25, 0.4] : [1, 1]);
        timeBar(ctx, colour, m.byTime, s, h, `${withUnit(data.input.name, data.input.unit)} — drag here or on the plot to brush a time range; click to clear`);
      });
      let count = 0;
      if (any) { // the brush and the lit rows
        const ctx = plot.ctx;
        brushBand(ctx, sel, s, X, nAll);
        scans(ctx, sel.lit, [1, 1]);
        rings(ctx, all, X, Y, 3.6, 1.3, GOLD, sel.lit);
        for (let i = 0; i < nAll; i++) if (sel.lit(i)) count++;
      }
      axis = { scale: s, bottom: h };
      cv.dataset.highlighted = String(count);
      setText(box.title, `${data.outputTitle(j)}: data ●${data.filled ? `, ${data.fillIns} ○` : ""}, posterior mean and ±2 sd${data.test ? ` (dashed: held-out ${data.row.many})` : ""}`);
    },
  };
}

// mostObserved is the output with the most real values (not stand-ins).
function mostObserved(data) {
  if (!data.filled) return 0;
  let best = 0, bc = -1;
  for (let j = 0; j < data.d; j++) {
    let c = 0;
    for (let i = 0; i < data.nAll; i++) if (!data.filled(i, j)) c++;
    if (c > bc) { bc = c; best = j; }
  }
  return best;
}
