// What the data carry, asked in one place. The views read a setup and its
// frames only through describe() and analysis(), so that each optional
// thing — ground truth, a test split, an image shape, missing-reading
// stand-ins — is looked up here once and every view works without it.
// (The protocol still names these sections after the data sets that first
// had them, "robot" and "frey": docs/protocol.md.)

const described = new WeakMap();

// viewOf names the view a setup opens: "explorer" for data with several
// outputs and an analysis of their latent layers, "autoencoder" for data
// whose outputs are its inputs, or "" (the regression page).
export function viewOf(setup) {
  if (!setup) return "";
  if (setup.robot) return "explorer";
  if (setup.frey) return "autoencoder";
  return "";
}

// describe returns what the setup's data carry (cached per setup):
//   n, d, nTest, nAll   training rows, outputs, test rows, both
//   input               {name, word, unit, values}: the first input in its
//                       original units, training rows then test rows
//   output(j, i)        row i's output j in original units (test rows after
//                       the training rows); outputSD(j, variance) the same
//                       units for a model variance; outputName(j)
//   unit                the outputs' unit ("" when the data do not say);
//                       outputLabel(j), outputTitle(j), outputNoun: words
//   filled(i, j)        whether the value is a stand-in for a missing one,
//                       or null when the data have none; fillIns, what
//                       to call the stand-ins
//   truth               null, or {x, y, unit, pairs, partners(i)}: ground-truth
//                       coordinates of every row, used for judging and
//                       colouring, never fitted; pairs, the revisits among
//                       the training rows (i₀, j₀, i₁, j₁, …)
//   test                null, or {n}: the held-out rows
//   image               null, or {height, width, lo, hi}: each output row is
//                       an image (lo, hi: the values drawn black and white)
//   row                 {one, all}: what a row is called, and all of them
//   outputRange         {lo, hi}: the outputs' range, original units
export function describe(setup) {
  let D = described.get(setup);
  if (D) return D;
  const r = setup.robot ?? null, n = setup.n, d = setup.d, q = setup.q ?? 1;
  const nTest = r ? r.n_all - n : 0, nAll = n + nTest;
  const nx = setup.norm_x, ny = setup.norm_y;
  const values = new Float64Array(nAll);
  for (let i = 0; i < n; i++) values[i] = setup.x[i * q] * nx.scale[0] + nx.mean[0];
  for (let i = n; i < nAll; i++) values[i] = r.x_test[(i - n) * q] * nx.scale[0] + nx.mean[0];
  const name = setup.input_names?.[0] ?? "x";
  const m = /^(.*?)\s*\(([^)]*)\)$/.exec(name); // "time (s)": the word and the unit
  // A unit conversion the data carry for their outputs (the robot's dBm).
  const scale = r?.dbm_scale ?? 1, offset = r?.dbm_offset ?? 0;
  const yOf = (j, v) => (v * ny.scale[j] + ny.mean[j]) * scale + offset;
  const yTest = r?.y_test;
  D = {
    n, d, nTest, nAll,
    input: { name, word: m ? m[1] : name, unit: m ? m[2] : "", values },
    output: (j, i) => yOf(j, i < n ? setup.y[i * d + j] : yTest[(i - n) * d + j]),
    outputSD: (j, vr) => Math.sqrt(Math.max(0, vr)) * ny.scale[j] * Math.abs(scale),
    outputName: (j) => setup.output_names?.[j] ?? `y${j + 1}`,
    // The model's mean (in model units) of output j in original units.
    outputOf: yOf,
    unit: r?.dbm_scale ? "dBm" : "",
    // What to call output j in titles and menus: the robot's outputs are
    // the signals of access points.
    outputLabel: (j) => (r ? `AP ${j + 1} · ${setup.output_names[j]}` : `output ${j + 1} · ${D.outputName(j)}`),
    outputNoun: r ? "signal of AP" : "output",
    outputTitle: (j) => (r ? `Signal strength of access point ${j + 1} (${setup.output_names[j]})` : `Output ${j + 1} (${D.outputName(j)})`),
    filled: r?.filled ? (i, j) => r.filled[i * d + j] > 0.5 : null,
    fillIns: r?.filled ? `${String(r.missing_dbm ?? -92).replace("-", "−")} dBm fill-ins` : "",
    truth: r?.positions ? truthOf(r, n, nAll) : null,
    test: nTest > 0 ? { n: nTest } : null,
    image: setup.frey ? { height: setup.frey.height, width: setup.frey.width, lo: setup.frey.lo, hi: setup.frey.hi } : null,
    // what a row is called, and all of them in order
    row: setup.frey ? { one: "frame", all: "the video" } : r ? { one: "scan", all: "the recording" } : { one: "row", all: "the data" },
    // the outputs' range over the training rows, original units
    get outputRange() {
      let lo = Infinity, hi = -Infinity;
      for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) { const v = yOf(j, setup.y[i * d + j]); if (v < lo) lo = v; if (v > hi) hi = v; }
      Object.defineProperty(this, "outputRange", { value: { lo, hi } });
      return this.outputRange;
    },
    timeScore: r?.time_score ?? null,
  };
  described.set(setup, D);
  return D;
}

function truthOf(r, n, nAll) {
  const x = new Float64Array(nAll), y = new Float64Array(nAll), P = r.positions;
  for (let i = 0; i < nAll; i++) { x[i] = P[2 * i]; y[i] = P[2 * i + 1]; }
  const pairs = r.revisit_pairs ?? [];
  const pp = Array.from({ length: n }, () => []);
  for (let k = 0; k + 1 < pairs.length; k += 2) { pp[pairs[k]].push(pairs[k + 1]); pp[pairs[k + 1]].push(pairs[k]); }
  return { x, y, unit: "m", pairs, partners: (i) => pp[i] ?? [] };
}

// analysis returns what a frame's analysis of the explorer carries, or
// null when the frame has none: newOutput (the output layer's mean and
// var are new), test ({mean, var} at the test rows) and testHidden (each
// hidden layer's, [{n, d, mean, var}]) with a new analysis; scores (per
// hidden layer, the geometry score against the ground truth, or null),
// revisits (how many the scores average), the held-out errors (testRMSE
// of the model, meanRMSE of the training mean, gp1RMSE of a one-layer GP)
// and restarts ({chosen, live, list}).
export function analysis(frame) {
  const r = frame?.robot;
  if (!r) return null;
  return {
    newOutput: !!r.new_output, test: r.test ?? null, testHidden: r.test_hidden ?? null,
    scores: r.scores ?? null, revisits: r.revisits,
    testRMSE: r.test_rmse, meanRMSE: r.mean_rmse, gp1RMSE: r.gp1_rmse,
    restarts: r.restarts ?? null,
  };
}
