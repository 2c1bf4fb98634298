// What the data carry, asked in one place. The views read a setup and its
// frames only through describe() and analysis(), so that each optional
// thing — ground truth, a test split, extra columns, an image shape,
// stand-ins for missing values — is looked up here once and every view
// works without it (docs/protocol.md, "Views").

const described = new WeakMap();

// viewOf names the view a setup opens: "explorer" for data with several
// outputs, "autoencoder" for data whose outputs are its inputs, or "" (the
// regression page).
export function viewOf(setup) {
  const k = setup?.view?.kind;
  return k === "explorer" || k === "autoencoder" ? k : "";
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
//   truth               null, or {names, x, y, unit, pairs, partners(i),
//                       minLag, radius, baselines}: ground-truth coordinates
//                       of every row (x, y: the first two), used for judging
//                       and colouring, never fitted; pairs, the revisits
//                       among the training rows (i₀, j₀, i₁, j₁, …);
//                       baselines, [{name, score}] of latents that use no
//                       model
//   columns             [{name, values, categories}]: values to colour by
//   test                null, or {n}: the held-out rows
//   image               null, or {height, width, lo, hi}: each output row is
//                       an image (lo, hi: the values drawn black and white)
//   row                 {one, many, all}: what a row is called, rows, and
//                       all of them
//   outputRange         {lo, hi}: the outputs' range, original units
//   preset              the preset's name ("" without)
//   sample              null, or {nTrain, nTest}: the data's rows when the
//                       setup carries a sample of them (n, nTest, … are then
//                       the sample's; docs/protocol.md, "Large data")
export function describe(setup) {
  let D = described.get(setup);
  if (D) return D;
  const v = setup.view ?? {}, n = setup.n, d = setup.d, q = setup.q ?? 1;
  const nAll = v.n_all ?? n, nTest = nAll - n;
  const nx = setup.norm_x, ny = setup.norm_y;
  const values = new Float64Array(nAll);
  for (let i = 0; i < n; i++) values[i] = setup.x[i * q] * nx.scale[0] + nx.mean[0];
  for (let i = n; i < nAll; i++) values[i] = v.x_test[(i - n) * q] * nx.scale[0] + nx.mean[0];
  const name = setup.input_names?.[0] ?? "x";
  const yOf = (j, y) => y * ny.scale[j] + ny.mean[j];
  const unit = setup.output_unit ?? "";
  const one = setup.row_name || "row";
  D = {
    n, d, nTest, nAll,
    input: { name, word: name, unit: setup.input_unit ?? "", values },
    output: (j, i) => yOf(j, i < n ? setup.y[i * d + j] : v.y_test[(i - n) * d + j]),
    outputSD: (j, vr) => Math.sqrt(Math.max(0, vr)) * ny.scale[j],
    outputName: (j) => setup.output_names?.[j] ?? `y${j + 1}`,
    // The model's mean (in model units) of output j in original units.
    outputOf: yOf,
    unit,
    outputLabel: (j) => `output ${j + 1} · ${D.outputName(j)}`,
    outputNoun: "output",
    outputTitle: (j) => `Output ${j + 1} (${D.outputName(j)})${unit ? `, ${unit}` : ""}`,
    filled: v.imputed ? (i, j) => v.imputed[i * d + j] > 0.5 : null,
    fillIns: v.imputed ? "stand-ins for missing values" : "",
    truth: v.truth ? truthOf(v.truth, n, nAll) : null,
    columns: (v.columns ?? []).map((c) => ({ name: c.name, values: c.values, categories: c.categories ?? null })),
    test: nTest > 0 ? { n: nTest } : null,
    image: v.kind === "autoencoder" && v.height > 0 ? { height: v.height, width: v.width, lo: v.lo, hi: v.hi } : null,
    row: { one, many: `${one}s`, all: `the ${one}s` },
    preset: v.preset ?? "",
    sample: v.sample ? { nTrain: v.sample.n_train, nTest: v.sample.n_test } : null,
    // the outputs' range over the training rows, original units
    get outputRange() {
      let lo = Infinity, hi = -Infinity;
      for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) { const y = yOf(j, setup.y[i * d + j]); if (y < lo) lo = y; if (y > hi) hi = y; }
      Object.defineProperty(this, "outputRange", { value: { lo, hi } });
      return this.outputRange;
    },
  };
  described.set(setup, D);
  return D;
}

function truthOf(t, n, nAll) {
  const p = t.p, V = t.values, x = new Float64Array(nAll), y = new Float64Array(nAll);
  for (let i = 0; i < nAll; i++) { x[i] = V[i * p]; y[i] = p > 1 ? V[i * p + 1] : 0; }
  const pairs = t.revisit_pairs ?? [];
  const pp = Array.from({ length: n }, () => []);
  for (let k = 0; k + 1 < pairs.length; k += 2) { pp[pairs[k]].push(pairs[k + 1]); pp[pairs[k + 1]].push(pairs[k]); }
  return {
    names: t.names ?? [], x, y, p, unit: t.unit ?? "", pairs, partners: (i) => pp[i] ?? [],
    minLag: t.min_lag, radius: t.radius, revisits: t.revisits ?? 0, baselines: t.baselines ?? [],
    // sample: {rows, far_pairs, revisit_pairs} when the scores are
    // estimates from samples (each with its standard error), else null
    sample: t.sample ?? null, farPairs: t.far_pairs ?? 0,
  };
}

// analysis returns what a frame's analysis of the explorer carries, or
// null when the frame has none: newOutput (the output layer's mean and
// var are new), test ({mean, var} at the test rows) and testHidden (each
// hidden layer's, [{n, d, mean, var}]) with a new analysis; scores (per
// hidden layer, the geometry score against the ground truth, or null;
// scoreErrors their standard errors when sampled, else null),
// the held-out errors (testRMSE of the model, meanRMSE of the training
// mean, gp1RMSE of a one-layer GP), restarts ({chosen, live, list,
// scoreName}, counted from 1) and collapsed (per hidden layer, per
// dimension: true when it has collapsed, latent.Collapsed's rule; or null).
export function analysis(frame) {
  const v = frame?.view;
  if (v?.kind !== "explorer") return null;
  return {
    newOutput: !!v.new_output, test: v.test ?? null, testHidden: v.test_hidden ?? null,
    scores: v.scores ?? null, scoreErrors: v.score_errors ?? null,
    testRMSE: v.test_rmse, meanRMSE: v.mean_rmse, gp1RMSE: v.gp1_rmse,
    restarts: frame.restarts ?? null, collapsed: v.collapsed ?? null,
  };
}
