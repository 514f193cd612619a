#!/usr/bin/env bash
# The seventy-fourth session's second GPU call: the progress bar's eta, now taken for each stage
# at its own pace, through an exhaustive SGEMM 410 from cold caches under a terminal (`script`),
# and `cache show` after it and a matmul tune. Run through the device tool with .kt (the
# release binary built with `--features cuda`, and ../shared/bench/sgemm.cu) and .gl carried:
#   bash docs/results/progress-bar-2026-12-07/eta.sh
set -u
mkdir -p .device && cp .kt/kerntune .device/kerntune
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
cp .kt/sgemm.cu benches/sgemm/sgemm.cu
rm -rf "$KERNTUNE_CACHE_DIR"
{
  /usr/bin/time -f "wall %e s" script -qfc "$BIN tune benches/sgemm/sgemm.toml --backend cuda --strategy exhaustive --no-db --top 3" "$OUT/eta-sgemm.typescript" > /dev/null; echo "exit $?"
  "$BIN" tune examples/matmul/matmul.toml --backend cuda --no-db --top 1 > /dev/null 2>&1; echo "matmul exit $?"
  "$BIN" cache show; echo "exit $?"
} > "$OUT/eta.txt" 2>&1
tr '\r' '\n' < "$OUT/eta-sgemm.typescript" | grep -ao "\[00:00:[0-9]*\].*" | sed 's/\x1b\[[0-9;]*[a-zA-Z]//g' | sed 's/ *$//' | uniq > "$OUT/eta-sgemm.txt"
grep -a "winner:\|wall time" "$OUT/eta-sgemm.typescript" >> "$OUT/eta.txt"
