#!/usr/bin/env bash
# An H100, a GPU outside the fleet, tuned from the six GPUs' recorded convolution spaces
# (../shared/spaces/gpus/convolution_*.json.gz, copied to .pack/hub/), through the command line,
# against the same tune without priors; a long tune without priors as the yardstick. Run on the
# GPU machine from the repository root with .device/ (gpu-check.sh --prepare) and .pack/ carried.
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
SPEC=examples/convolution/convolution_hub.toml
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
nproc >> "$OUT/gpu.txt"
# The yardstick: 300 evaluations without priors (YARDSTICK=0 leaves it out; SEEDS, BUDGETS and JOBS, the compile threads, pick the rest).
[ "${YARDSTICK:-1}" = 1 ] && /usr/bin/time -f "wall %e s" "$BIN" tune $SPEC --backend cuda --strategy hybrid --budget 300 --seed 1 --no-prior --no-db --json > "$OUT/yardstick.json" 2> "$OUT/yardstick.err"
for s in ${SEEDS:-1 2 3 4 5 6 7 8}; do
  for b in ${BUDGETS:-20}; do
    /usr/bin/time -f "wall %e s" "$BIN" tune $SPEC --backend cuda --budget $b --seed $s --prior .pack/hub/*.json.gz --no-db --json ${JOBS:+-j $JOBS} > "$OUT/transfer-$b-$s${JOBS:+-j$JOBS}.json" 2> "$OUT/transfer-$b-$s${JOBS:+-j$JOBS}.err"
    /usr/bin/time -f "wall %e s" "$BIN" tune $SPEC --backend cuda --budget $b --seed $s --strategy hybrid --no-prior --no-db --json ${JOBS:+-j $JOBS} > "$OUT/hybrid-$b-$s${JOBS:+-j$JOBS}.json" 2> "$OUT/hybrid-$b-$s${JOBS:+-j$JOBS}.err"
  done
done
