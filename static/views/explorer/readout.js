// The explorer's numbers in words (web/robot.templ's readout): each hidden
// layer's geometry score against the ground truth, the input-only
// latent's, and the held-out error of the model beside the baselines', with
// a verdict that says why where the model does worse.
import { setText } from "../dom.js";

// readout fills root's readout from the data (data.js) and a frame's
// analysis (data.js's analysis(), or null).
export function readout(root, data, a) {
  const set = (id, v) => setText(root.querySelector(`[data-testid="${id}"]`), v);
  const sc = a?.scores ?? [];
  // No revisits on the path (a short recording): say so, not "–".
  const none = a?.scores && a.revisits === 0 ? "no revisits" : "–";
  set("score-1", sc[0] != null ? sc[0].toFixed(3) : none);
  set("score-2", sc[1] != null ? sc[1].toFixed(3) : none);
  set("score-time", data.timeScore != null ? data.timeScore.toFixed(3) : "–");
  set("rmse-model", a?.testRMSE != null ? a.testRMSE.toFixed(2) : "–");
  set("rmse-mean", a?.meanRMSE != null ? a.meanRMSE.toFixed(2) : "…");
  set("rmse-gp1", a?.gp1RMSE != null ? a.gp1RMSE.toFixed(2) : "computing…");
  set("rmse-verdict", verdict(data, a));
}

// verdict says in words where the model is worse on the held-out rows
// than a baseline, and why.
function verdict(data, a) {
  const m = a?.testRMSE, u = data.unit ? ` ${data.unit}` : "";
  const base = [["the training mean", a?.meanRMSE], ["a one-layer GP", a?.gp1RMSE]].filter(([, v]) => v != null);
  if (m == null || base.length === 0) return "";
  const better = base.filter(([, v]) => v < m);
  if (!better.length) return `On the held-out scans the deep GP (${m.toFixed(1)}${u}) does better than ${base.map(([n]) => n).join(" and ")}.`;
  return `On the held-out scans the deep GP (${m.toFixed(1)}${u}) does worse than ${better.map(([n, v]) => `${n} (${v.toFixed(1)}${u})`).join(" and ")}: ` +
    `its input is ${data.input.word} and the held-out scans come after the training scans, so it must extrapolate in ${data.input.word}, where a GP reverts to its mean with growing uncertainty. Its strength here is the latent map, not forecasting.`;
}
