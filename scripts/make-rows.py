#!/usr/bin/env python3
"""Writes a CSV data set of the robot's shape for memory and scale
measurements (docs/measurements.md, "Memory at a million rows"): N rows of
one input x (time, 0 to 10) and 30 outputs y0…y29, sines of the input with
Gaussian noise of 0.1. Deterministic: the same file byte for byte on every
run (about 264 bytes a row). Usage: python3 scripts/make-rows.py N > FILE.csv"""
import math
import random
import sys

n = int(sys.argv[1])
random.seed(1)
out = sys.stdout
out.write("x," + ",".join("y%d" % j for j in range(30)) + "\n")
for i in range(n):
    t = i / n * 10
    ys = [math.sin(t * (1 + j / 10) + j) + 0.1 * random.gauss(0, 1) for j in range(30)]
    out.write("%.6f," % t + ",".join("%.5f" % v for v in ys) + "\n")
