// The explorer's numbers in words (web/robot.templ's readout): each hidden
// layer's geometry score against the ground truth beside the two
// baselines that use no model, and the held-out error of the model beside
// the baselines', each with a verdict that says only what the numbers
// beside it support. Where the data carry no ground truth or no test
// split, the readout says so instead of showing a score.
import { setText } from "../dom.js";

// close is how near two geometry scores must be to read as the same (the
// score of a given latent moves by about this much between restarts).
const close = 0.02;

// readout fills root's readout from the data (data.js), a frame's
// analysis (data.js's analysis(), or null) and the restarts.
export function readout(root, data, a) {
  const set = (id, v) => setText(root.querySelector(`[data-testid="${id}"]`), v);
  for (const box of root.querySelectorAll(".explorer-readout [data-needs]")) {
    box.hidden = !data[box.dataset.needs];
  }
  setText(root.querySelector("[data-testid='explorer-about']"), about(data));
  const sc = a?.scores ?? [], se = a?.scoreErrors ?? [], T = data.truth;
  const none = T && T.revisits === 0 ? "no revisits" : "–";
  // a sampled score with its standard error: "0.990 ± 0.003"
  const f = (v, e) => (v != null ? v.toFixed(3) + (e != null ? ` ± ${e.toFixed(3)}` : "") : none);
  set("score-1", f(sc[0], se[0]));
  set("score-2", f(sc[1], se[1]));
  set("score-pca", f(baseline(T, "principal"), baselineErr(T, "principal")));
  set("score-time", f(baseline(T, "input"), baselineErr(T, "input")));
  // Every error with the outputs' unit; data that name none say so once.
  const u = data.unit ? ` ${data.unit}` : "", rmse = (v) => v.toFixed(2) + u;
  set("rmse-model-label", data.unit ? "test RMSE" : "test RMSE, original units");
  set("rmse-model", a?.testRMSE != null ? rmse(a.testRMSE) : "–");
  set("rmse-mean", a?.meanRMSE != null ? rmse(a.meanRMSE) : "…");
  set("rmse-gp1", a?.gp1RMSE != null ? rmse(a.gp1RMSE) : data.sample ? "not fitted" : "computing…"); // large data: no baseline fit
  set("geometry-verdict", geometry(data, a));
  set("rmse-verdict", heldOut(data, a));
}

// about says what the view is showing: the data, the preset, and which
// optional things the data carry.
function about(data) {
  const carry = [];
  carry.push(data.truth ? `ground truth (${data.truth.names.join(", ")})` : "no ground truth, so no geometry score");
  const S = data.sample, k = (n) => n.toLocaleString("en");
  const TS = data.truth?.sample;
  if (TS) carry.push(`too many rows to compare every pair: the geometry scores (± their standard errors) are estimated from the revisits of ${k(TS.rows)} of ${k(S ? S.nTrain : data.n)} training ${data.row.many}, ranked among ${k(TS.far_pairs)} of ${k(data.truth.farPairs)} far pairs`);
  carry.push(data.test ? `a test split of ${k(S ? S.nTest : data.test.n)} ${data.row.many}` : "no test split, so no held-out error");
  if (data.columns.length) carry.push(`${data.columns.length} column${data.columns.length > 1 ? "s" : ""} to colour by`);
  return `${k(S ? S.nTrain : data.n)} training ${data.row.many}, ${data.d} outputs; the data carry ${carry.join("; ")}.` +
    (S ? ` Shown: a fixed sample of ${k(data.nAll)} ${data.row.many} over the density of all (scores and errors are of every row).` : "") +
    (data.preset ? ` The preset for this shape: "${data.preset}".` : "");
}

function baseline(T, word) {
  return T?.baselines.find((b) => b.name.includes(word))?.score ?? null;
}

function baselineErr(T, word) {
  return T?.baselines.find((b) => b.name.includes(word))?.std_err ?? null;
}

// geometry says how the first hidden layer's geometry compares with the
// latents that use no model, and where the model started.
function geometry(data, a) {
  const T = data.truth;
  if (!T) return "No geometry score: these data carry no ground truth to judge the latent space against (a CSV gives it as truth… columns).";
  if (T.revisits === 0) return "No geometry score: the ground truth never comes back to where it was (no revisits), so there is no loop to close.";
  const h1 = a?.scores?.[0], pca = baseline(T, "principal"), inp = baseline(T, "input");
  if (h1 == null || pca == null) return "";
  const rs = a?.restarts, live = rs?.list.find((r) => r.restart === rs.live);
  const start = live?.start === "pca" ? `; this model's first hidden layer started from them (restart ${live.restart})`
    : live?.start === "linear" ? `; this model's first hidden layer started from the input (restart ${live.restart})` : "";
  const v = (x) => x.toFixed(3);
  if (h1 > pca + close) return `h₁ (${v(h1)}) closes the loop better than the outputs' principal components (${v(pca)}) and the input alone (${v(inp)})${start}.`;
  if (h1 >= pca - close) return `h₁ scores ${v(h1)}, as the outputs' principal components do with no model at all (${v(pca)}): the geometry is already in the data's leading components${start}. The input alone scores ${v(inp)}.`;
  return `h₁ scores ${v(h1)}, below the outputs' principal components (${v(pca)})${start}${h1 > inp + close ? `, above the input alone (${v(inp)})` : `, and no better than the input alone (${v(inp)})`}.`;
}

// heldOut says where the model is worse on the held-out rows than a
// baseline, and why.
function heldOut(data, a) {
  const m = a?.testRMSE, u = data.unit ? ` ${data.unit}` : "", rows = data.row.many;
  const base = [["the training mean", a?.meanRMSE], ["a one-layer GP", a?.gp1RMSE]].filter(([, v]) => v != null);
  if (m == null || base.length === 0) return "";
  const better = base.filter(([, v]) => v < m);
  // As many decimals as the cards' (2), more where fewer would print a
  // "worse" or "better" between two equal numbers (0.4 against 0.4).
  let d = 2;
  while (d < 6 && base.some(([, v]) => v.toFixed(d) === m.toFixed(d))) d++;
  const e = (v) => `${v.toFixed(d)}${u}`;
  if (!better.length) return `On the held-out ${rows} the deep GP (${e(m)}) does better than ${base.map(([n, v]) => `${n} (${e(v)})`).join(" and ")}.`;
  const worse = `On the held-out ${rows} the deep GP (${e(m)}) does worse than ${better.map(([n, v]) => `${n} (${e(v)})`).join(" and ")}`;
  const x = data.input.values;
  let trainMax = -Infinity, testMin = Infinity;
  for (let i = 0; i < data.n; i++) trainMax = Math.max(trainMax, x[i]);
  for (let i = data.n; i < data.nAll; i++) testMin = Math.min(testMin, x[i]);
  if (!(testMin > trainMax)) return `${worse}.`;
  return `${worse}: the held-out ${rows} all come after the training ${rows} in ${data.input.word}, so the model must extrapolate, ` +
    "where a GP reverts to its mean with growing uncertainty. Its strength here is the latent map, not forecasting.";
}
