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
