// The Δbound readout shown while an edit is under way: how the bound and
// each of its terms changed since the edit began, layer by layer, so that
// "moving a point away from the data raises compression" is there in
// numbers. One implementation for every panel that edits the model.
import { fmt } from "./plot.js";

// termsOf returns the bound's terms in a frame: {bound, lik, layers: [[kl,
// compression, propagation], …]}, or null when the frame has no bound.
export function termsOf(frame) {
  if (!frame || frame.bound == null) return null;
  return { bound: frame.bound, lik: frame.likelihood, layers: frame.layers.map((l) => [l.kl, l.compression, l.propagation]) };
}

// One readout at a time: the panel that starts an edit claims it, and the
// readout of an earlier edit elsewhere goes away.
let owner = null;
export function claimDelta(el) {
  if (owner && owner !== el) clearDelta(owner);
  owner = el;
}

const signed = (v) => (Math.abs(v) < 5e-4 ? "0" : `${v > 0 ? "+" : "−"}${fmt(Math.abs(v))}`);

// showDelta writes into el the change from terms t0 to t1: the bound, the
// likelihood and every layer's penalties (a penalty that grows lowers the
// bound). The largest change is marked; what names the edit.
export function showDelta(el, t0, t1, what = "") {
  if (owner !== el || !t0 || !t1 || t0.layers.length !== t1.layers.length) return;
  const dB = t1.bound - t0.bound, dL = t1.lik - t0.lik;
  const rows = t1.layers.map((l, i) => l.map((v, k) => v - t0.layers[i][k]));
  let big = 0;
  for (const r of rows) for (const v of r) big = Math.max(big, Math.abs(v));
  const cell = (v) => `<td${big > 5e-4 && Math.abs(v) === big ? ' class="big"' : ""}>${signed(v)}</td>`;
  const html =
    (what ? `<div class="delta-what">${what}</div>` : "") +
    `<div class="delta-head"><b>Δ bound ${signed(dB)} nats</b> <span>(bound ${fmt(t1.bound)})</span></div>` +
    `<table class="delta"><tr><th></th><th>KL</th><th>compression</th><th>propagation</th></tr>` +
    rows.map((r, i) => `<tr><th>layer ${i + 1}</th>${r.map(cell).join("")}</tr>`).join("") +
    `<tr class="lik"><th>likelihood</th><td colspan="3">${signed(dL)}</td></tr></table>` +
    `<div class="delta-note">Δ bound = Δ likelihood − Δ penalties</div>`;
  if (el.dataset.html !== html) { el.innerHTML = html; el.dataset.html = html; }
  el.dataset.testid = "drag-delta";
}

// clearDelta empties el and forgets the readout it held.
export function clearDelta(el) {
  el.replaceChildren();
  delete el.dataset.html;
}
