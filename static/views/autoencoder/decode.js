// Decode requests (the "decode" op, docs/protocol.md): outputs are never
// sent with frames; the view asks for the ones it shows. One request of
// each kind ("cursor", "frame", "tiles") is in flight at a time; a newer
// wish waits for the answer. An answer ("decoded") or a refusal ("error",
// shown by the app as a toast) frees its kind; a request unanswered for
// LOST ms (lost in a reconnect) is forgotten.

const LOST = 4000;

// createDecoder sends requests through app and hands each answer to
// onAnswer(kind, message).
export function createDecoder(app, onAnswer) {
  const ids = new Map(); // request id → kind
  let inflight = {}, asked = {};
  const done = (m) => {
    const kind = ids.get(m.id);
    if (!kind) return null;
    ids.delete(m.id);
    if (inflight[kind] === m.id) inflight[kind] = 0;
    return kind;
  };
  app.on("error", (m) => { if (m.op === "decode") done(m); });
  app.on("decoded", (m) => { const kind = done(m); if (kind) onAnswer(kind, m); });
  return {
    // ask sends a request of a kind ({points} and/or {frames}).
    ask(kind, cmd) {
      const id = app.send({ op: "decode", ...cmd });
      if (id) { ids.set(id, kind); inflight[kind] = id; asked[kind] = performance.now(); }
    },
    // busy says whether a request of the kind is in flight.
    busy(kind) {
      if (inflight[kind] && performance.now() - asked[kind] > LOST) { ids.delete(inflight[kind]); inflight[kind] = 0; }
      return !!inflight[kind];
    },
    // reset forgets every request (new data: answers for the old are
    // dropped by the app).
    reset() { ids.clear(); inflight = {}; asked = {}; },
  };
}
