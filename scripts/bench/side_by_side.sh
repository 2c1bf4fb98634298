#!/bin/sh
# The side-by-side benchmark of docs/measurements.md ("Side by side with
# GPyTorch"): time to a held-out RMSE of 2.2 dBm on the walk at 100,000
# and 1,000,000 rows, dgpviz's viz fit against GPyTorch's DeepGP on the
# same files, one thread each, back to back, with peak RSS.
#
# It needs GPyTorch, which is not a dependency of dgpviz: install it with
# ../shared/peers/install-gpytorch.sh (GPyTorch 1.9.1 into a virtual
# environment beside Debian's python3-torch), and install libopenblas0 so
# that torch's BLAS is OpenBLAS, not the generic reference BLAS (check with
# update-alternatives --display libblas.so.3-x86_64-linux-gnu).
#
# Usage: scripts/bench/side_by_side.sh [OUTDIR] [ROWS...]
#   OUTDIR   where the data, logs and traces go (default /tmp/dgpviz-sbs)
#   ROWS     sizes of the walk (default: 100000 1000000)
# Environment: PYTHON (default /work/gpyvenv/bin/python, else python3),
# TARGET (default 2.2), GPY_EPOCHS (default 10), VIZ_FLAGS (viz fit's
# stopping flags; default "-tol-datum 1e-9 -iters 8000": at 10⁵ rows the
# default rule stops at 2.204 dBm, just short of the target, so the fit is
# let run on to it; -iters 500 for a quick try).
#
# GPyTorch runs with glibc's malloc told to keep freed memory
# (MALLOC_MMAP_MAX_=0, MALLOC_TRIM_THRESHOLD_): torch's large temporaries
# are otherwise handed back to the kernel and faulted in again at every
# batch, which doubled its CPU time (scripts/bench/gpytorch_walk.py).
# Long runs share the machine: each program runs under nice -n 10.
#
# Each run writes OUTDIR/{dgpviz,gpytorch}-ROWS.{log,time}: dgpviz's trace
# (viz fit -trace) and GPyTorch's log have a row per held-out check with the
# CPU and wall seconds of the fit so far, the checks' own time excluded;
# the .time files are /usr/bin/time -v's (peak RSS: "Maximum resident set
# size"). The summary at the end is the first check at or below TARGET.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-/tmp/dgpviz-sbs}
[ $# -gt 0 ] && shift
sizes=${*:-100000 1000000}
target=${TARGET:-2.2}
epochs=${GPY_EPOCHS:-10}
py=${PYTHON:-/work/gpyvenv/bin/python}
[ -x "$py" ] || py=python3
if ! "$py" -c 'import gpytorch' 2>/dev/null; then
	echo "side_by_side.sh: $py cannot import gpytorch: install it with ../shared/peers/install-gpytorch.sh (and libopenblas0), or set PYTHON" >&2
	exit 2
fi
[ -x /usr/bin/time ] || { echo "side_by_side.sh: needs GNU time (/usr/bin/time, Debian package time) for peak RSS" >&2; exit 2; }
mkdir -p "$out"
(cd "$here" && go build -o "$out/viz" ./cmd/viz)
# One thread each: the Go runtime on one CPU, BLAS and OpenMP on one thread.
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
for n in $sizes; do
	data=$out/walk-$n.csv
	[ -f "$data" ] || "$out/viz" data walk -rows "$n" -o "$data"
	# Checks of GPyTorch's held-out RMSE about 10 times an epoch; at a
	# million rows on a fixed 10,000 of the held-out rows (all of them to
	# confirm the target).
	every=$(( n / 1024 / 10 + 1 ))
	GOMAXPROCS=1 nice -n 10 /usr/bin/time -v "$out/viz" fit -data "$data" -out "$out/dgpviz-$n.json" -trace "$out/dgpviz-$n.log" -quiet ${VIZ_FLAGS:--tol-datum 1e-9 -iters 8000} 2> "$out/dgpviz-$n.time"
	MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=68719476736 nice -n 10 /usr/bin/time -v "$py" "$here/scripts/bench/gpytorch_walk.py" "$data" -epochs "$epochs" -every "$every" -check-rows 10000 -target "$target" -threads 1 > "$out/gpytorch-$n.log" 2> "$out/gpytorch-$n.time"
done
for n in $sizes; do
	echo "$n rows, first held-out check at or below $target dBm:"
	awk -F, -v t="$target" 'NR > 1 && $6 <= t { printf "  dgpviz:   iteration %s, %.1f epochs, %.1f s CPU, %.1f s wall, RMSE %s\n", $1, $2, $3, $4, $6; found = 1; exit } END { if (!found) print "  dgpviz:   not reached" }' "$out/dgpviz-$n.log"
	grep -m1 -B1 '^reached' "$out/gpytorch-$n.log" | head -1 | sed 's/^/  gpytorch: /' || true
	grep -q '^reached' "$out/gpytorch-$n.log" || echo "  gpytorch: not reached: $(tail -n 2 "$out/gpytorch-$n.log" | head -1)"
	for k in dgpviz gpytorch; do
		echo "  $k peak RSS: $(awk -F': ' '/Maximum resident/ { printf "%.0f MB", $2 / 1024 }' "$out/$k-$n.time")"
	done
done
