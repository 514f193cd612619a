#!/usr/bin/env bash
# The same on two H200s of one host (kind nvidia-h200-x2, 32 cores), 2026-11-28: the hub
# convolution tuned cold for 48 evaluations on both GPUs (`--devices all`) from the six GPUs'
# recorded spaces and the H100's recording, into a database; `db show` and `report` on it; then
# the GPU suites (the several-GPU test among them). Binaries and carry as for run.sh.
set -u
PACK_NAME=x2
. scripts/device-runs.sh
cold
$T "$BIN" tune $SPEC --backend cuda --devices all --budget 48 --prior .pack/hub/convolution_*.json.gz $LIKE --db "$W/x2.sqlite" --json > "$W/x2-tune.json" 2> "$W/x2-tune.err"
"$BIN" db show --db "$W/x2.sqlite" > "$W/x2-db-show.txt" 2>&1
"$BIN" report $SPEC --db "$W/x2.sqlite" --out "$W/x2-report.html" > "$W/x2-report.txt" 2>&1
pack
[ "${TESTS:-1}" = 1 ] && bash scripts/gpu-check.sh tests 2>&1 | tee "$W/x2-tests.txt" | tail -30
pack
