#!/usr/bin/env python3
"""Writes the hostile model uploads measured in docs/measurements.md
("Parsing uploads") into the directory given (default: the current one):

rows16m.json       16 MiB of data rows "[0]," (issue 27: 436 MB of RSS)
inducing1400.json  a valid 4 MB one-layer model with 1,400 inducing points,
                   refused by the server's limit of 64

and the hostile CSVs for POST /data, each just under its 16 MiB limit:

csv-rows.csv       data rows "0,0" (refused past the row limit)
csv-wide.csv       the most numbers the limits admit: 2000 rows of 1000
                   columns, each "0.00000" (a valid upload, 2 million values)
csv-labels.csv     2000 rows whose label column holds 8 KB of text each
                   (the labels are kept)
csv-field.csv      one row whose third column is one quoted 16 MiB field
csv-header.csv     a header of 1000 column names of 16 KB each
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

csvlimit = 16 << 20  # web/upload.go's maxDataBytes


def write(name, data):
    assert len(data) <= csvlimit, (name, len(data))
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


head = b"x,y\n"
write("csv-rows.csv", head + b"0,0\n" * ((csvlimit - len(head)) // 4))

cols = 1000
header = b"x1," + b",".join(b"y%d" % j for j in range(1, cols)) + b"\n"
row = b",".join([b"0.00000"] * cols) + b"\n"
write("csv-wide.csv", header + row * 2000)

label = b"a" * 8000
write("csv-labels.csv", b"x,y,label\n" + (b"0,0," + label + b"\n") * 2000)

field = b"b" * (csvlimit - 64)
write("csv-field.csv", b"x,y,z\n0,0,\"" + field + b"\"\n")

name = b"n" * (16 << 10)
write("csv-header.csv", b"x," + b",".join(b"y%d" % j + name[:16000] for j in range(cols - 1)) + b"\n0," + b",".join([b"0"] * (cols - 1)) + b"\n")
