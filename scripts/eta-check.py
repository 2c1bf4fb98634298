#!/usr/bin/env python3
"""Judge viz fit's ETA against the time the fit then still took.

    python3 scripts/eta-check.py VIZ fit ARGS...

runs `VIZ fit ARGS...` with its stderr a terminal (so that the progress
bar is redrawn every 100 ms), notes when each drawing came, and prints each line's ETA beside the
time the fit then still had to go (to its last progress line: writing the
model file is after) and whether the ETA held: one time within a factor
of 2, or, while it is "estimating…", the "at least", "at most" or "A to B"
it states beside that true. The last lines count those that did not hold
and say when the first time was stated. docs/measurements.md ("The ETA, judged") has its
tables.
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
    """Whether the ETA held with left seconds to go, and how to say it."""
    eta = bounds(eta)
    if eta == "":
        return True, "-"
    if eta.startswith("at least "):
        ok = left >= seconds(eta)
    elif eta.startswith("at most "):
        ok = left <= seconds(eta)
    elif " to " in eta:
        a, b = eta.split(" to ")
        ok = seconds(a) <= left <= seconds(b)
    else:
        v = seconds(eta)
        ok = v == 0 and left < 0.05 or left > 0 and 0.5 <= v / left <= 2
        return ok, f"×{v / left:.2f}" if left > 0 else "end"
    return ok, "holds" if ok else "FALSE"


def bounds(eta):
    """What an ETA states: one time, or what holds while it is estimating
    ("at least 3s", "at most 40s", "3s to 40s", or "" for nothing yet)."""
    m = re.fullmatch(r"estimating…(?: \((.*)\))?", eta)
    return eta if m is None else m.group(1) or ""


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
    bad, forms, most, least, ones = 0, {}, [], [], []
    for t, eta, line in lines:
        ok, say = verdict(eta, end - t)
        bad += not ok
        b = bounds(eta)
        form = "nothing" if b == "" else " ".join(b.split()[:2]) if b.startswith("at ") else "A to B" if " to " in b else "one time"
        if form == "one time":
            ones.append((t, end - t, seconds(b)))
        forms[form] = forms.get(form, 0) + 1
        if form == "at most" and end - t >= 1:
            most.append(seconds(b) / (end - t))
        if form == "at least" and end - t >= 1:
            least.append(seconds(b) / (end - t))
        it = re.search(r"iter (\d+)/", line)
        print(f"{t:7.1f} s  {end - t:7.1f} s left  ETA {eta:>20}  {say:>6}  iteration {it.group(1) if it else '?'}")
    print(f"{len(lines)} lines in {end:.1f} s, {bad} ETAs that did not hold; forms {forms}", end="")
    for form, r in ("at most", most), ("at least", least):
        if r:
            r.sort()
            print(f"; {form} ÷ time left (1 s or more left): median {r[len(r) // 2]:.2f}, range {r[0]:.2f}–{r[-1]:.2f}", end="")
    print()
    if ones:
        t, left, _ = ones[0]
        r = [v / l for _, l, v in ones if l > 0]
        span = f", ETA ÷ time left {min(r):.2f}–{max(r):.2f}" if r else ""
        print(f"first time stated at {t:.1f} s with {left:.1f} s left ({100 * left / end:.0f} % of the fit){span}")


if __name__ == "__main__":
    main(sys.argv)
