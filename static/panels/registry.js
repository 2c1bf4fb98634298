// The panel registry: each panel module registers a factory under a kind.
// A factory(el, app) returns {draw(state)} and optionally destroy(); app
// gives send(cmd) and the shared state. New views (the Monte Carlo message
// figure, the robot latent-space explorer) register here.

const kinds = new Map();

export function register(kind, factory) {
  kinds.set(kind, factory);
}

export function create(kind, el, app) {
  const f = kinds.get(kind);
  if (!f) throw new Error(`panels: unknown kind ${kind}`);
  const p = f(el, app);
  p.kind = kind;
  return p;
}

// units of layer i's input and output axes: {ux, uy, xlabel, ylabel}.
import { identity, unitsOf, withUnit } from "../plot.js";
export function layerUnits(setup, i, nLayers, outDim = 0, inDim = 0) {
  const r = {};
  if (i === 0 && setup) {
    r.ux = unitsOf(setup.norm_x.mean[inDim], setup.norm_x.scale[inDim]);
    r.xlabel = withUnit(`input ${setup.input_names[inDim] ?? "x"}`, setup.input_unit);
  } else {
    r.ux = identity;
    r.xlabel = `h${i}${inDim ? ` dimension ${inDim + 1}` : ""} (hidden layer ${i} output)`;
  }
  if (i === nLayers - 1 && setup) {
    r.uy = unitsOf(setup.norm_y.mean[outDim], setup.norm_y.scale[outDim]);
    r.ylabel = withUnit(`output ${setup.output_names[outDim] ?? "y"}`, setup.output_unit);
  } else {
    r.uy = identity;
    r.ylabel = `h${i + 1}${outDim ? ` dimension ${outDim + 1}` : ""}`;
  }
  return r;
}

// dimSelect adds (once) a labelled <select> of n dimensions to tools.
export function dimSelect(tools, label, n, value, onChange, testid) {
  let sel = tools.querySelector(`select[data-testid="${testid}"]`);
  if (sel && sel.options.length === n) return sel;
  if (sel) sel.parentElement.remove();
  const lab = document.createElement("label");
  lab.className = "dim";
  lab.textContent = label + " ";
  sel = document.createElement("select");
  sel.dataset.testid = testid;
  for (let k = 0; k < n; k++) sel.add(new Option(String(k + 1), String(k))); // shown from 1, valued from 0
  sel.value = String(Math.min(value, n - 1));
  sel.addEventListener("change", () => onChange(Number(sel.value)));
  lab.append(sel);
  tools.append(lab);
  return sel;
}
