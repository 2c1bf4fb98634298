#!/usr/bin/env python3
"""Judge viz fit's ETA against the time the fit then still took.

    python3 scripts/eta-check.py VIZ fit ARGS...

runs `VIZ fit ARGS...` with its stderr a terminal (so that the progress
bar is redrawn every 100 ms), notes when each drawing came, and prints each line's ETA beside the
time the fit then still had to go (to its last progress line: writing the
model file is after) and whether the ETA held. A time stated ("12s",
"12s (3s to 40s)") holds within a factor of 2 of the time left, "under
2s" with under 2 s left (the line's resolution: it says so for a
forecast of 1 s or less); the bounds beside it ("at least", "at most",
"A to B"), and those beside "estimating…", hold when true. The last lines
count the lines that did not hold, say when the first time was stated,
and what share of the times stated from then on held. docs/measurements.md
("The ETA, judged", "A point ETA") has its tables.
"""
import os
import pty
import re
import subprocess
import sys
import time


def seconds(s):
    """Seconds of a Go duration ("1m20s", "900ms")."""
    return sum(float(v) * {"h": 3600, "m": 60, "s": 1, "ms": 1e-3}[u]
               for v, u in re.findall(r"([\d.]+)(h|ms|m|s)", s))


def verdict(eta, left):
    """Whether the ETA's time (None: none stated) and its bounds held with
    left seconds to go, and how to say it."""
    point, b = split(eta)
    ok = True
    if b.startswith("at least "):
        ok = left >= seconds(b)
    elif b.startswith("at most "):
        ok = left <= seconds(b)
    elif " to " in b:
        lo, hi = b.split(" to ")
        ok = seconds(lo) <= left <= seconds(hi)
    say = "holds" if ok else "FALSE"
    if point is None:
        return None, ok, say if b else "-"
    if point == "under 2s":
        held = left <= 2
        return held, ok, ("under" if held else "OVER") + ("" if ok else " FALSE")
    v = seconds(point)
    held = v == 0 and left < 0.05 or left > 0 and 0.5 <= v / left <= 2
    return held, ok, (f"×{v / left:.2f}" if left > 0 else "end") + ("" if ok else " FALSE")


def split(eta):
    """An ETA's time (None while it is estimating) and the bounds it
    states beside it ("at least 3s", "at most 40s", "3s to 40s", or "")."""
    m = re.fullmatch(r"(.*?)(?: \((.*)\))?", eta)
    point, b = m.group(1), m.group(2) or ""
    return (None if point == "estimating…" else point), b


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    t0 = time.monotonic()
    main_fd, term = pty.openpty()
    p = subprocess.Popen(argv[1:], stderr=term, stdout=subprocess.DEVNULL)
    os.close(term)
    lines, buf = [], b""
    while True:
        try:
            chunk = os.read(main_fd, 4096)
        except OSError:  # the terminal closed with the process
            chunk = b""
        if not chunk:
            break
        buf += chunk
        *done, buf = re.split(rb"[\r\n]", buf)
        for line in done:
            line = line.decode(errors="replace")
            m = re.search(r"ETA (.+?)\s*$", line)
            if m and line.startswith("["):
                lines.append((time.monotonic() - t0, m.group(1), line))
    if p.wait() != 0 or not lines:
        sys.exit(f"{' '.join(argv[1:])}: exit status {p.returncode}, {len(lines)} progress lines")
    end = lines[-1][0]
    bad, forms, held, stated, first = 0, {}, 0, 0, None
    for t, eta, line in lines:
        point, ok, say = verdict(eta, end - t)
        bad += not ok
        b = split(eta)[1]
        form = "nothing" if b == "" else " ".join(b.split()[:2]) if b.startswith("at ") else "A to B"
        form = ("estimating, " if point is None else "a time, ") + form
        forms[form] = forms.get(form, 0) + 1
        if point is not None:
            first = t if first is None else first
            stated += 1
            held += point
        it = re.search(r"iter (\d+)/", line)
        print(f"{t:7.1f} s  {end - t:7.1f} s left  ETA {eta:>32}  {say:>10}  iteration {it.group(1) if it else '?'}")
    print(f"{len(lines)} lines in {end:.1f} s, {bad} whose bounds did not hold; forms {forms}")
    if first is not None:
        print(f"first time stated at {first:.1f} s ({100 * first / end:.0f} % of the fit); "
              f"the time stated held at {held} of {stated} lines ({100 * held / stated:.0f} %)")


if __name__ == "__main__":
    main(sys.argv)
