#!/usr/bin/env python3
"""Summarises the reports of scripts/hardening-campaign.sh (DIR/ATTACK-RUN.json)
as the markdown table of docs/measurements.md ("Hardening"): per attack, the
median and range over runs of the victims' frame rates before and during the
attack and their ratio, the honest newcomers admitted, the server's peak RSS
against its budget and its RSS 5 s after the attack, and what the attacker
got."""
import glob
import json
import os
import statistics
import sys

d = sys.argv[1]
order = ["add-data", "upload", "park", "compare", "density", "figure", "reset", "decode", "wide"]
runs = {}
for path in sorted(glob.glob(os.path.join(d, "*.json"))):
    name = os.path.basename(path)[:-5]
    attack, _, _ = name.rpartition("-")
    try:
        rep = json.load(open(path))
    except json.JSONDecodeError:
        continue
    runs.setdefault(attack, []).append(rep)


def med(vals, fmt="%.1f"):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "–"
    m = statistics.median(vals)
    if len(vals) == 1:
        return fmt % m
    return (fmt + " (" + fmt + "–" + fmt + ")") % (m, min(vals), max(vals))


print("| attack | runs | victims' frames/s before | during | kept | newcomers admitted | RSS peak, MB (× budget) | RSS 5 s after, MB | the attacker got |")
print("|---|---|---|---|---|---|---|---|---|")
for attack in order + sorted(set(runs) - set(order)):
    reps = runs.get(attack)
    if not reps:
        continue
    a = [r["attack"] for r in reps]
    answers = {}
    for x in a:
        for k, v in x["attacker_answers"].items():
            answers[k] = answers.get(k, 0) + v
    top = sorted(answers.items(), key=lambda kv: -kv[1])[:3]
    got = "; ".join("%s ×%d" % (k, v // len(a)) for k, v in top)
    print("| %s | %d | %s | %s | %s | %d of %d | %s (%s) | %s | %s |" % (
        attack, len(a),
        med([x["victims_fps_before"]["mean"] for x in a]),
        med([x["victims_fps_during"]["mean"] for x in a]),
        med([100 * x["victims_ratio"] for x in a], "%.0f %%"),
        sum(x["honest_admitted"] for x in a), sum(x["honest_tried"] for x in a),
        med([x["rss_peak_mb"] for x in a], "%.0f"),
        med([x["rss_over_budget"] for x in a], "%.2f"),
        med([x["rss_after_mb"] for x in a], "%.0f"),
        got.replace("|", "/"),
    ))
