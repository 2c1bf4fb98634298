// One colour scale per view: every panel of a view colours an item (a
// scan, a frame) by the same value, cut into the same bins of the page's
// colour map (colormap.js), so that a colour means the same value in the
// latent views, on the ground truth and on every colour bar. Panels draw
// their marks bin by bin (marks.js), one path per colour.
import { palette, colorBar } from "../colormap.js";
import { fmt } from "../plot.js";

export class ColourScale {
  // values: one per item; lo…hi: the range the bins cut (the values' own
  // range by default); title and unit: what the colour bar says.
  constructor(values, { bins = 24, lo, hi, title, unit = "" }) {
    const n = values.length;
    if (lo === undefined) { lo = Infinity; for (let i = 0; i < n; i++) lo = Math.min(lo, values[i]); }
    if (hi === undefined) { hi = -Infinity; for (let i = 0; i < n; i++) hi = Math.max(hi, values[i]); }
    if (!(hi > lo)) hi = lo + 1;
    const bin = new Uint8Array(n), members = Array.from({ length: bins }, () => []);
    for (let i = 0; i < n; i++) {
      const k = Math.min(bins - 1, Math.max(0, Math.floor(((values[i] - lo) / (hi - lo)) * bins)));
      bin[i] = k; members[k].push(i);
    }
    this.values = values; this.lo = lo; this.hi = hi; this.bins = bins;
    this.bin = bin; // item i's bin
    this.members = members; // each bin's items, in order
    this.css = palette(bins, 1); // each bin's colour
    this.title = title;
    // the ends in words (an end within a millionth of the range of 0 is 0:
    // a time that starts at 0 s, after rounding for the wire)
    const u = unit ? ` ${unit}` : "", word = (v) => `${fmt(Math.abs(v) < 1e-6 * (hi - lo) ? 0 : v)}${u}`;
    this.loText = word(lo); this.hiText = word(hi);
    this.key = `${title}|${this.loText}|${this.hiText}`; // what the colour bar shows
  }

  // translucent is each bin's colour at opacity alpha.
  translucent(alpha) { return palette(this.bins, alpha); }

  // bar draws the colour bar in the box (x, y, w, h) with its words below
  // (large: for the back of a hall).
  bar(ctx, x, y, w, h, large = false) {
    colorBar(ctx, x, y, w, h, this.loText, this.hiText, this.title, large);
  }
}

// The explorer's colourings: by the input (time, for the robot), by a
// ground-truth coordinate when the data carry one, by any extra column
// (labels and values never fitted), or by any output. colourModes lists
// them for a menu ({value, label}); colourBy returns the scale of one
// (cached per data and mode) over training and test rows.
export function colourModes(data) {
  const modes = [{ value: "time", label: data.input.word }];
  if (data.truth) modes.push({ value: "x", label: data.truth.names[0] ?? "truth 1" });
  if (data.truth?.p > 1) modes.push({ value: "y", label: data.truth.names[1] ?? "truth 2" });
  data.columns.forEach((c, k) => modes.push({ value: `col:${k}`, label: c.name }));
  for (let j = 0; j < data.d; j++) modes.push({ value: `ap:${j}`, label: `${data.outputNoun} ${j + 1} · ${data.outputName(j)}` });
  return modes;
}

const scales = new WeakMap();
export function colourBy(data, mode) {
  let byMode = scales.get(data);
  if (!byMode) scales.set(data, (byMode = new Map()));
  let s = byMode.get(mode);
  if (s) return s;
  const held = data.test ? `, ● training, ○ held-out ${data.row.many}` : "";
  if ((mode === "x" || mode === "y") && data.truth) {
    const name = data.truth.names[mode === "x" ? 0 : 1] ?? mode, u = data.truth.unit;
    s = new ColourScale(data.truth[mode], { title: `${name}${u ? ` (${u})` : ""}${held}`, unit: u });
  } else if (mode.startsWith("col:") && data.columns[Number(mode.slice(4))]) {
    const c = data.columns[Number(mode.slice(4))];
    // Categories are coloured by their index, one bin each (up to 24).
    const bins = c.categories ? Math.max(2, Math.min(24, c.categories.length)) : 24;
    s = new ColourScale(c.values, { bins, lo: c.categories ? -0.5 : undefined, hi: c.categories ? bins - 0.5 : undefined,
      title: c.categories ? `${c.name}: ${c.categories.slice(0, 6).join(", ")}${c.categories.length > 6 ? ", …" : ""}${held}` : `${c.name}${held}` });
  } else if (mode.startsWith("ap:")) {
    const j = Number(mode.slice(3)), v = new Float64Array(data.nAll);
    for (let i = 0; i < data.nAll; i++) v[i] = data.output(j, i);
    const u = data.unit ? `, ${data.unit}` : "";
    s = new ColourScale(v, { title: `${data.outputNoun} ${j + 1} (${data.outputName(j)})${u}`, unit: data.unit });
  } else {
    const { word, unit, values } = data.input;
    s = new ColourScale(values, { title: data.test ? `${word} (● training, ○ held-out ${data.row.many})` : word, unit });
  }
  byMode.set(mode, s);
  return s;
}
