#!/usr/bin/env bash
# The hardening campaign of docs/measurements.md ("Hardening"): each attack
# of `viz loadtest -mode attack` against a fresh `viz serve` (a process of
# its own, so that its RSS is the server's), RUNS times, attacks
# interleaved, each run's JSON report in OUT. Usage:
#
#	scripts/hardening-campaign.sh VIZ OUT [RUNS] [ATTACK ...]
#
# SERVE_ARGS adds flags to viz serve (e.g. "-return-memory=false"); the
# environment (GOMEMLIMIT=off) reaches it too. A server from before issue 27
# knows no -trust-proxy: run it with TRUST= (it has no per-client limits to
# tell the clients apart for). scripts/hardening-table.py makes the table.
set -euo pipefail
viz="$1"
out="$2"
runs="${3:-3}"
shift $(($# < 3 ? $# : 3))
attacks=("$@")
if [ ${#attacks[@]} -eq 0 ]; then
	attacks=(add-data upload park compare density figure reset decode wide)
fi
frey="${FREY:-../shared/data/frey_faces/frey_rawface.mat}"
mkdir -p "$out"
for r in $(seq "$runs"); do
	for attack in "${attacks[@]}"; do
		port=$((20000 + RANDOM % 20000))
		data=(-data step)
		query=""
		clients=1
		case "$attack" in
		decode)
			data+=(-data "frey:$frey")
			query="data=frey&play=1"
			;;
		wide)
			# The campaign's 2000 × 460 uploads, admitted: two clients
			# upload and play them.
			data+=(-session-memory 800)
			clients=2
			;;
		esac
		# shellcheck disable=SC2086 # SERVE_ARGS are words
		"${SERVER:-$viz}" serve -addr "127.0.0.1:$port" ${TRUST--trust-proxy} -max-conns-per-ip 4096 "${data[@]}" -log-level error ${SERVE_ARGS:-} >/dev/null 2>&1 &
		pid=$!
		for _ in $(seq 300); do
			curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break
			sleep 0.1
		done
		"$viz" loadtest -url "ws://127.0.0.1:$port/ws" -pid "$pid" -mode attack -attack "$attack" \
			${query:+-attack-query "$query"} -attack-clients "$clients" -n 4 -duration "${DURATION:-45s}" -json >"$out/$attack-$r.json" || true
		cat /proc/loadavg >"$out/$attack-$r.load"
		kill "$pid"
		wait "$pid" 2>/dev/null || true
		printf '%s run %d: ' "$attack" "$r"
		python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["attack"]; print("victims %.0f%%, newcomers %d/%d, RSS peak %.0f MB (%.2f x budget), after %.0f MB" % (100*a["victims_ratio"], a["honest_admitted"], a["honest_tried"], a["rss_peak_mb"], a["rss_over_budget"], a["rss_after_mb"]))' "$out/$attack-$r.json" || echo "no report"
	done
done
