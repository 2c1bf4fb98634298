#!/usr/bin/env python3
"""Writes the hostile model uploads measured in docs/measurements.md
("Parsing uploads") into the directory given (default: the current one):

rows16m.json       16 MiB of data rows "[0]," (issue 27: 436 MB of RSS)
inducing1400.json  a valid 4 MB one-layer model with 1,400 inducing points,
                   refused by the server's limit of 64
"""
import json
import os
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "."

limit = 16 << 20  # web/upload.go's maxUploadBytes
head, tail = b'{"data":{"X":[', b'[0]],"Y":[[0]]},"layers":[]}'
rows = (limit - len(head) - len(tail)) // 4
with open(os.path.join(out, "rows16m.json"), "wb") as f:
    f.write(head + b"[0]," * rows + tail)

m, n = 1400, 30
x = [[i / (n - 1)] for i in range(n)]
model = {
    "jitter": 1e-6,
    "data": {"X": x, "Y": [[float(v[0] > 0.5)] for v in x]},
    "layers": [{
        "kernel": {"type": "rbf", "variance": 1.0, "lengthscales": [0.3]},
        "noise_variance": 0.01,
        "inducing_inputs": [[i / (m - 1)] for i in range(m)],
        "q_mu": [[0.25] for _ in range(m)],
        # lower triangles, row r of r+1 entries: the identity
        "q_sqrt": [[[0.0] * r + [1.0] for r in range(m)]],
    }],
}
with open(os.path.join(out, "inducing1400.json"), "w") as f:
    json.dump(model, f, separators=(",", ":"))
