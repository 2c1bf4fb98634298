#!/usr/bin/env bash
# Runs every fuzz target for a while (default 60 s each; FUZZTIME=5m for a
# deeper run), one after another. The targets' seed corpora also run as
# ordinary tests in `go test ./...`; crashers the fuzzer finds are written
# to testdata/fuzz/ beside the target and become regression tests.
set -euo pipefail
cd "$(dirname "$0")/.."
t="${FUZZTIME:-60s}"
for target in \
	"FuzzParseCommand ./internal/stream/" \
	"FuzzParseQuery ./internal/admit/" \
	"FuzzDecode ./internal/stream/" \
	"FuzzReadModel ./internal/engine/" \
	"FuzzReadCSV ./internal/dataset/" \
	"FuzzReadRobot ./internal/dataset/" \
	"FuzzReadMAT ./internal/dataset/" \
	"FuzzPresets ./internal/montecarlo/" \
	"FuzzParseGaussianInputs ./internal/montecarlo/" \
	"FuzzParseHidden ./internal/engine/"; do
	set -- $target
	echo "== $1 ($2, $t)"
	go test -run '^$' -fuzz "^$1\$" -fuzztime "$t" "$2" 2>&1 | grep -E "elapsed|PASS|FAIL|ok|panic" | tail -3
done
