#!/usr/bin/env python3
"""Writes the NumPy fixtures of internal/dataset/testdata with numpy
itself, so that the Go readers are tested against the reference writer
(internal/dataset/npy_test.go, TestNumPyFixtures). Deterministic: values
by formula. Usage: python3 scripts/make-numpy-fixtures.py [DIR]"""
import os
import sys

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else "internal/dataset/testdata"
n = 6
i = np.arange(n)
# A structured array: time, two outputs (float32 and int16), a label of
# text and a split of text.
rec = np.zeros(n, dtype=[("x_time", "<f8"), ("y_a", "<f4"), ("y_b", ">i2"), ("label_room", "<U7"), ("split", "S5")])
rec["x_time"] = i * 0.5
rec["y_a"] = -60 + i * 0.25
rec["y_b"] = -70 + 3 * i
rec["label_room"] = ["kitchen" if k % 2 else "hall" for k in i]
rec["split"] = [b"test" if k % 3 == 2 else b"train" for k in i]
np.save(os.path.join(out, "numpy_records.npy"), rec)
# A plain 2-D float32 array in Fortran order: an autoencoder's outputs.
np.save(os.path.join(out, "numpy_fortran.npy"), np.asfortranarray((np.arange(n * 3).reshape(n, 3) / 4).astype("<f4")))
# A compressed .npz of plain arrays: x (N×2), y (N×1), truth (N×2) and a
# numeric split.
np.savez_compressed(os.path.join(out, "numpy_arrays.npz"),
                    x=np.stack([i * 1.0, i * i * 1.0], axis=1), y=(i * 10 - 3).reshape(n, 1).astype("<i8"),
                    truth=np.stack([-i * 1.0, i + 0.5], axis=1), split=(i % 3 == 2).astype(np.int64))
