// Following a shared session (docs/protocol.md, "Following"): what the
// page does with the messages a follower gets besides setups and frames,
// and what a presenter's page sends for its followers.

// historyPoints turns a "history" message (the bound history from the
// start of the run, sent when a follower joins) into the page's history
// points ({iter, bound, lik, terms: per layer [kl, compression,
// propagation]}), absent terms (NaN) as undefined, as frames leave them.
export function historyPoints(m) {
  const L = m.layer_count, out = [];
  const v = (x) => (Number.isNaN(x) ? undefined : x);
  for (let k = 0; k < m.n; k++) {
    const terms = [];
    for (let l = 0; l < L; l++) terms.push([v(m.kl[k * L + l]), v(m.compression[k * L + l]), v(m.propagation[k * L + l])]);
    out.push({ iter: m.iters[k], bound: m.bounds[k], lik: v(m.likelihoods[k]), terms });
  }
  return out;
}

// presentCommand is the presenter's presentation state as the "present"
// command: followers mirror it.
export function presentCommand(present, scale, slide) {
  return { op: "present", present, scale, slide: slide ?? "" };
}

// otherRelay picks, at random, a relay's page other than this one from
// the hello's list, or "" (a page whose relay failed goes there).
export function otherRelay(relays) {
  const others = (relays ?? []).filter((u) => { try { return new URL(u).origin !== location.origin; } catch { return false; } });
  return others.length ? others[Math.floor(Math.random() * others.length)] : "";
}

// SHOWS are the page's views of the live session, in slide order: the
// fit, layers and bound; the same with samples through the network; the
// depth comparison; the message figure.
export const SHOWS = ["live", "samples", "depth", "messages"];

// slideOf encodes what the presenter shows as the presentation state's
// slide (at most 256 bytes): "view=samples&at=0.512", or, in a lesson,
// "lesson=paper&step=3&view=…" (steps counted from 1).
export function slideOf(show, lesson) {
  const q = new URLSearchParams();
  if (lesson) { q.set("lesson", lesson.name); q.set("step", String(lesson.step + 1)); }
  q.set("view", show.name);
  if (show.at != null && Number.isFinite(show.at)) q.set("at", show.at.toPrecision(6));
  return q.toString();
}

// parseSlide reads a slide: {show: {name, at}, lesson, step (from 0)};
// anything it does not know shows the live view.
export function parseSlide(slide) {
  const q = new URLSearchParams(slide ?? "");
  const name = SHOWS.includes(q.get("view")) ? q.get("view") : "live";
  const at = q.has("at") ? Number(q.get("at")) : NaN;
  const step = Number(q.get("step"));
  const lesson = /^[a-z0-9-]{1,40}$/.test(q.get("lesson") ?? "") && Number.isInteger(step) && step >= 1 ? q.get("lesson") : "";
  return { show: { name, at: Number.isFinite(at) ? at : null }, lesson, step: lesson ? step - 1 : -1 };
}
