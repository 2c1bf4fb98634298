#!/usr/bin/env bash
# Measures what one POST /model (a .json body) or POST /data (a .csv body)
# costs the server: wall time of the request and the server's resident
# memory before and at its peak (VmHWM), for a fresh `viz serve` per body.
# Usage:
#
#	[SERVE_ARGS="-max-rows 5000000"] scripts/upload-cost.sh VIZ_BINARY BODY.json|BODY.csv ...
#
# The bodies of docs/measurements.md ("Parsing uploads") are made by
# scripts/upload-bodies.py.
set -euo pipefail
viz="$1"
shift
port=$((20000 + RANDOM % 20000))
for body in "$@"; do
	# shellcheck disable=SC2086 # SERVE_ARGS are words
	"$viz" serve -addr "127.0.0.1:$port" -log-level error ${SERVE_ARGS:-} >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break
		sleep 0.1
	done
	before=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
	route=model type=application/json
	case "$body" in *.csv) route=data type=text/csv ;; esac
	out=$(curl -s -o /tmp/upload-cost.$$ -w '%{http_code} %{time_total}' --data-binary "@$body" \
		-H "Content-Type: $type" "http://127.0.0.1:$port/$route")
	peak=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
	printf '%s: status %s s, RSS %d MiB before, peak %d MiB: %s\n' "$(basename "$body")" "$out" \
		$((before / 1024)) $((peak / 1024)) "$(head -c 160 /tmp/upload-cost.$$ | tr '\n' ' ')"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	rm -f /tmp/upload-cost.$$
done
