#!/usr/bin/env bash
# What a tune learned from, in its report, on a GPU (2026-11-28, twenty-second session): the hub
# convolution tuned cold for 20 evaluations on CUDA from the six GPUs' recorded spaces
# (.pack/hub/, copied from ../shared/spaces/gpus) and the recording of the GPU of the same kind
# (LIKE), into a database; then `kerntune db show` and `kerntune report` on it (the page, the
# database and the JSON report come back); then the GPU test suites. Run on the GPU machine from
# the repository root with .pack/ and .gl/ carried (binaries: `cargo build --release --features
# cuda -p kerntune && bash scripts/gpu-check.sh --prepare`, packed into .pack/device.tar.xz).
set -u
. scripts/device-runs.sh
cold
$T "$BIN" tune $SPEC --backend cuda --budget 20 --prior .pack/hub/convolution_*.json.gz $LIKE --db "$W/db.sqlite" --json > "$W/tune.json" 2> "$W/tune.err"
"$BIN" db show --db "$W/db.sqlite" > "$W/db-show.txt" 2>&1
"$BIN" report $SPEC --db "$W/db.sqlite" --out "$W/report.html" > "$W/report.txt" 2>&1
pack
[ "${TESTS:-1}" = 1 ] && bash scripts/gpu-check.sh tests 2>&1 | tee "$W/tests.txt" | tail -30
pack
