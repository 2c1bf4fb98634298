// The protocol, version VERSION below (docs/protocol.md): decoding binary messages and building
// commands. Binary messages: u32 LE header length, JSON header (arrays are
// references {"$": k} to sections), then the sections (f32 or q16).

export const VERSION = 2; // internal/stream.ProtocolVersion

const utf8 = new TextDecoder();

// decode turns a binary message into its header object, with every
// reference replaced by a Float32Array of the section's values.
export function decode(buf) {
  const dv = new DataView(buf);
  const hl = dv.getUint32(0, true);
  const header = JSON.parse(utf8.decode(new Uint8Array(buf, 4, hl)));
  const base = 4 + hl;
  const arrays = (header.sections || []).map((s) => {
    const off = base + s.o;
    if (s.t === "f32") {
      return new Float32Array(buf, off, s.n);
    }
    if (s.t === "q16") {
      const q = new Uint16Array(buf, off, s.n);
      const lo = s.lo ?? 0, hi = s.hi ?? 0;
      const step = (hi - lo) / 65534;
      const out = new Float32Array(s.n);
      for (let i = 0; i < s.n; i++) out[i] = q[i] === 65535 ? NaN : lo + q[i] * step;
      return out;
    }
    throw new Error(`protocol: unknown section type ${s.t}`);
  });
  const resolve = (x) => {
    if (Array.isArray(x)) return x.map(resolve);
    if (x && typeof x === "object") {
      const keys = Object.keys(x);
      if (keys.length === 1 && keys[0] === "$") return arrays[x.$];
      for (const k of keys) x[k] = resolve(x[k]);
    }
    return x;
  };
  delete header.sections;
  // sections were read above; resolve the rest
  return resolve(header);
}

// Config <-> URL query, the same form the server parses (stream.ParseQuery).
export function configToQuery(c) {
  const p = new URLSearchParams();
  p.set("data", c.dataset);
  p.set("hidden", (c.hidden || []).join(","));
  p.set("m", String(c.inducing));
  p.set("opt", c.method);
  p.set("lr", String(c.learning_rate));
  p.set("seed", String(c.seed));
  if (c.frozen && c.frozen.length) p.set("frozen", c.frozen.join(","));
  p.set("play", c.play ? "1" : "0");
  p.set("speed", String(c.speed));
  return p.toString();
}
