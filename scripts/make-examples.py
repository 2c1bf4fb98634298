#!/usr/bin/env python3
"""Writes the generated example data sets of examples/ (see
examples/README.md). Deterministic: the same files byte for byte on every
run. Usage: python3 scripts/make-examples.py [DIR]"""
import math
import os
import random
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "examples"
os.makedirs(out, exist_ok=True)


def loop_position(s):
    """A point at arc length s (m) along a 20 m × 10 m corridor loop with
    rounded corners of radius 2 m, counter-clockwise from its bottom left."""
    w, h, r = 20.0, 10.0, 2.0
    sides = [w - 2 * r, h - 2 * r, w - 2 * r, h - 2 * r]
    arc = math.pi * r / 2
    per = sum(sides) + 4 * arc
    s %= per
    # corners' centres and the headings of the straight sides
    starts = [(r, 0.0), (w, r), (w - r, h), (0.0, h - r)]
    heads = [(1, 0), (0, 1), (-1, 0), (0, -1)]
    centres = [(w - r, r), (w - r, h - r), (r, h - r), (r, r)]
    for k in range(4):
        if s < sides[k]:
            return starts[k][0] + heads[k][0] * s, starts[k][1] + heads[k][1] * s
        s -= sides[k]
        if s < arc:
            a = -math.pi / 2 + k * math.pi / 2 + s / r
            return centres[k][0] + r * math.cos(a), centres[k][1] + r * math.sin(a)
        s -= arc
    return starts[0]


def loop():
    """A walker goes twice around the loop at about 0.45 m/s (speed varying
    by ±20 %); eight beacons' signal strengths (dBm, a log-distance path
    loss with 2 dB noise, floored at −90) are read once a second. Every
    fifth reading is held out."""
    rng = random.Random(1)
    beacons = [(-2, -2), (10, -3), (22, -2), (23, 5), (22, 12), (10, 13), (-2, 12), (-3, 5)]
    rows, s = [], 0.0
    for t in range(240):
        x, y = loop_position(s)
        sig = []
        for bx, by in beacons:
            d = math.hypot(x - bx, y - by)
            sig.append(max(-90.0, -32 - 26 * math.log10(max(d, 0.5)) + rng.gauss(0, 2)))
        lap = 1 if s < loop_length() else 2
        rows.append((t, sig, x, y, lap, "test" if t % 5 == 4 else "train"))
        s += 0.45 * (1 + 0.2 * math.sin(2 * math.pi * t / 70))
    with open(os.path.join(out, "loop.csv"), "w") as f:
        f.write("x_time [s]," + ",".join("y_beacon%d [dBm]" % (k + 1) for k in range(len(beacons))) + ",truth_x [m],truth_y [m],label_lap,split\n")
        for t, sig, x, y, lap, split in rows:
            f.write("%d,%s,%.2f,%.2f,%d,%s\n" % (t, ",".join("%.1f" % v for v in sig), x, y, lap, split))


def loop_length():
    return 2 * (16 + 6) + 2 * math.pi * 2


def blob():
    """8 × 8 grey-level images (0–255) of a soft spot that goes round a
    circle, 300 of them at random angles, with a little noise: data whose
    outputs are their inputs (an autoencoder) with a one-dimensional cause
    (the angle, given as label_angle to colour by, never fitted)."""
    rng = random.Random(2)
    with open(os.path.join(out, "spot.csv"), "w") as f:
        f.write(",".join("y%d" % (k + 1) for k in range(64)) + ",label_angle\n")
        for _ in range(300):
            a = rng.uniform(0, 360)
            cx, cy = 3.5 + 2.2 * math.cos(math.radians(a)), 3.5 + 2.2 * math.sin(math.radians(a))
            px = []
            for i in range(8):
                for j in range(8):
                    v = 230 * math.exp(-((j - cx) ** 2 + (i - cy) ** 2) / (2 * 1.1 ** 2)) + 15 + rng.gauss(0, 4)
                    px.append(min(255, max(0, round(v))))
            f.write(",".join(str(p) for p in px) + ",%.0f\n" % a)


loop()
blob()
