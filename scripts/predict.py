#!/usr/bin/env python3
"""Predict with a dgpviz model file in numpy alone, layer by layer.

    python3 scripts/predict.py MODEL.json [INPUTS.csv]

prints what `viz predict -model MODEL.json -in INPUTS.csv` prints: the
inputs and every layer's output message (mean and variance per input and
output), the columns named as viz predict names them (the data's own names,
"layer1_dim2" for a hidden layer's), each beside its unit as viz predict
gives it (the file's data.x_unit and y_unit, "original units" when it names
none, "latent" for a hidden layer's). INPUTS.csv holds one input per row in the data's original units (a
first line that is not numeric is a header); without it, the model's
training inputs, which a file that refers to a public data set instead of
holding its data (docs/model-format.md, "data_set") does not have: give
INPUTS.csv for those. The last layer's message is in the data's original units;
hidden layers' are in the latent units the model learnt. The file format and
the formulas are in docs/model-format.md; this script is their reference
implementation outside Go (cmd/viz/predict_numpy_test.go checks it against
viz predict).
"""
import base64
import csv
import json
import sys
import zlib

import numpy as np

# Compact arrays hold little-endian binary of these types (zlib-compressed
# when "compression" says so), in base64.
DTYPES = {"float64": "<f8", "int32": "<i4", "int16": "<i2",
          "uint16": "<u2", "int8": "i1", "uint8": "u1"}


def array(v):
    """An array of a model file as float64, and whether it is data stored
    in original units: rows of numbers, or the compact form."""
    if isinstance(v, list):
        return np.array(v, dtype=np.float64), False
    if "data_set" in v:  # the values are a public data set's, not in the file
        ref = v["data_set"]
        sys.exit(f"the model's data are the {ref['name']} data set's ({ref['file']}, sha256 {ref['sha256']}), "
                 "which this script does not read: give the inputs as a CSV file (predict.py MODEL.json INPUTS.csv)")
    shape = v["shape"]
    raw = base64.b64decode(v["base64"])
    if v.get("compression") == "zlib":
        raw = zlib.decompress(raw)
    vals = np.frombuffer(raw, dtype=DTYPES[v["dtype"]]).astype(np.float64)
    if v.get("triangle") == "lower":  # q_sqrt: the lower triangles, row by row
        d, m, _ = shape
        out = np.zeros((d, m, m))
        rows, cols = np.tril_indices(m)
        out[:, rows, cols] = vals.reshape(d, -1)
        return out, False
    return vals.reshape(shape), v.get("units") == "original"


def columns(v):
    """The number of columns of a matrix field in either form."""
    return len(v[0]) if isinstance(v, list) else v["shape"][1]


def q_sqrt(v):
    """q_sqrt as D lower triangular M×M matrices. As rows of numbers, a row
    r holds M entries (zeros above the diagonal) or the triangle's r+1."""
    if not isinstance(v, list):
        return array(v)[0]
    m = len(v[0])
    out = np.zeros((len(v), m, m))
    for d, rows in enumerate(v):
        for r, row in enumerate(rows):
            out[d, r, :r + 1] = row[:r + 1]
    return out


def normalizers(model, q, d):
    """(x_mean, x_scale, y_mean, y_scale): original = normalised·scale + mean."""
    n = model.get("normalization") or {}
    get = lambda key, k, fill: np.array(n[key], dtype=np.float64) if n.get(key) is not None else np.full(k, fill)
    return get("x_mean", q, 0.0), get("x_scale", q, 1.0), get("y_mean", d, 0.0), get("y_scale", d, 1.0)


def training_inputs(model, x_mean, x_scale):
    """data.X in original units."""
    x, original = array(model["data"]["X"])
    return x if original else x * x_scale + x_mean


def lengthscales(kern, q):
    if kern["type"] == "rbfiso":
        return np.full(q, kern["lengthscale"], dtype=np.float64)
    return np.array(kern["lengthscales"], dtype=np.float64)


def cov(kern, a, b):
    """k(a, b) for certain inputs (rows of a and b)."""
    if kern["type"] == "linear":
        return (a * np.array(kern["variances"])) @ b.T
    ls = lengthscales(kern, a.shape[1])
    d2 = (((a[:, None, :] - b[None, :, :]) / ls) ** 2).sum(-1)
    return kern["variance"] * np.exp(-0.5 * d2)


def psi1(kern, mu, s, z):
    """ψ1 = E[k(h, Z)] for h ~ N(mu, diag s), one row per input; s is None
    for certain inputs (the first layer's)."""
    if kern["type"] == "linear":  # linear in h: the variance drops out
        return (mu * np.array(kern["variances"])) @ z.T
    if s is None:
        return cov(kern, mu, z)
    l2 = lengthscales(kern, mu.shape[1]) ** 2
    d2 = ((mu[:, None, :] - z[None, :, :]) ** 2 / (l2 + s)[:, None, :]).sum(-1)
    return kern["variance"] / np.sqrt(np.prod(1 + s / l2, axis=1))[:, None] * np.exp(-0.5 * d2)


def layer_message(layer, jitter, mu, s):
    """A layer's output message at inputs N(mu, diag s): mean ψ1 Kuu⁻¹ m_d
    and variance noise + ψ1 Kuu⁻¹ S_d Kuu⁻¹ ψ1ᵀ, with Kuu = k(Z, Z) +
    jitter·I and S_d = L_d L_dᵀ, through the Cholesky factor C of Kuu (the
    whitened form: ψ1 Kuu⁻¹ = (C⁻¹ψ1ᵀ)ᵀ C⁻¹)."""
    kern = layer["kernel"]
    z, _ = array(layer["inducing_inputs"])
    m, _ = array(layer["q_mu"])
    ls = q_sqrt(layer["q_sqrt"])
    kuu = cov(kern, z, z) + jitter * np.eye(len(z))
    c = np.linalg.cholesky(kuu)
    v = np.linalg.solve(c, psi1(kern, mu, s, z).T)       # C⁻¹ψ1ᵀ, M×N
    mean = v.T @ np.linalg.solve(c, m)                    # N×D
    var = np.empty_like(mean)
    for d in range(m.shape[1]):
        u = v.T @ np.linalg.solve(c, ls[d])               # ψ1 Kuu⁻¹ L_d, N×M
        var[:, d] = layer["noise_variance"] + (u * u).sum(axis=1)
    return mean, var


def predict(model, x):
    """Every layer's message at inputs x (original units), the last one in
    original units."""
    layers = model["layers"]
    q, d = columns(layers[0]["inducing_inputs"]), columns(layers[-1]["q_mu"])
    x_mean, x_scale, y_mean, y_scale = normalizers(model, q, d)
    jitter = model.get("jitter", 1e-6)
    mu, s = (x - x_mean) / x_scale, None
    out = []
    for layer in layers:
        mu, s = layer_message(layer, jitter, mu, s)
        out.append([mu, s])
    out[-1] = [out[-1][0] * y_scale + y_mean, out[-1][1] * y_scale ** 2]
    return out


def column_name(name):
    """A column's name without a unit in brackets at its end ("y_ap1 [dBm]"
    -> "y_ap1"), as dataset.ColumnName."""
    name = name.strip()
    if name.endswith("]"):
        i = name.rfind(" [")
        if i > 0:
            return name[:i].strip()
    return name


def column_names(names, n, prefix):
    """n names from names (one per column), else prefix1…prefixn."""
    if not names or len(names) != n:
        names = [""] * n
    return [column_name(v) or f"{prefix}{k + 1}" for k, v in enumerate(names)]


def data_names(model, key, section_key):
    """The data's own column names: data.x_names or data.y_names, else the
    dataset section's (older files)."""
    names = model["data"].get(key)
    if names is None:
        names = (model.get("dataset") or {}).get(section_key)
    return names


# A hidden layer's outputs have no unit but those the fit gave them.
LATENT = "latent"


def unit_name(u):
    """A unit as viz predict names it (dataset.UnitName)."""
    return u or "original units"


def squared_unit(u):
    """The unit of a variance of values in unit u (dataset.SquaredUnit):
    "dBm²", "(m/s)²", "latent"."""
    if u == LATENT:
        return LATENT
    if any(c in u for c in " /·"):
        return f"({u})²"
    return u + "²"


def layer_unit(i, layers, y_unit):
    """Layer i's (from 0) output unit: the data's for the last layer."""
    return unit_name(y_unit) if i == layers - 1 else LATENT


def layer_columns(i, layers, d, y_names):
    """Layer i's (from 0) columns, as viz predict names them: the outputs'
    names for the last layer, layer{i+1}_dim{k} for a hidden one."""
    if i == layers - 1:
        return column_names(y_names, d, "y")
    return [f"layer{i + 1}_dim{k + 1}" for k in range(d)]


def read_inputs(path):
    rows = []
    with open(path, newline="") as f:
        for i, rec in enumerate(csv.reader(f)):
            try:
                rows.append([float(v) for v in rec])
            except ValueError:
                if i > 0:
                    raise
    return np.array(rows, dtype=np.float64)


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    with open(argv[1]) as f:
        model = json.load(f)
    if len(argv) == 3:
        x = read_inputs(argv[2])
    else:
        q, d = columns(model["layers"][0]["inducing_inputs"]), columns(model["layers"][-1]["q_mu"])
        x_mean, x_scale, _, _ = normalizers(model, q, d)
        x = training_inputs(model, x_mean, x_scale)
    msgs = predict(model, x)
    y_names = data_names(model, "y_names", "output_names")
    x_columns = column_names(data_names(model, "x_names", "input_names"), x.shape[1], "x")
    data = model["data"]
    layers = []
    for i, (m, v) in enumerate(msgs):
        u = layer_unit(i, len(msgs), data.get("y_unit"))
        layers.append({"layer": i + 1, "units": {"mean": u, "var": squared_unit(u)},
                       "columns": layer_columns(i, len(msgs), m.shape[1], y_names), "mean": m.tolist(), "var": v.tolist()})
    json.dump({"units": {"x": unit_name(data.get("x_unit"))}, "x_columns": x_columns, "x": x.tolist(), "layers": layers}, sys.stdout)
    print()


if __name__ == "__main__":
    main(sys.argv)
