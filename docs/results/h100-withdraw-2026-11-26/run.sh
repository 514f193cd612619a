#!/usr/bin/env bash
# The transfer search withdrawing its picks in flight that the outcomes told since rank lower,
# on a GPU outside the fleet: the hub convolution tuned for 20 evaluations from the six GPUs'
# recorded spaces (../shared/spaces/gpus/convolution_*.json.gz, copied to .pack/hub/), at the
# default 16 compile threads, cold (kerntune's compile cache and NVRTC's emptied before each
# run), seeds 1-8, three ways in turn: withdrawing (the build committed), the same binary with
# withdrawal switched off (KT_WD=off, a switch in the device build only, not committed: the
# transfer search of the previous commit), and the hybrid search without priors. Then the
# yardstick (300 evaluations without priors) and the GPU test suites.
# JOBS=4 runs every tune with -j 4 (the files' names end in -j4); SEEDS, YARDSTICK=0 and
# TESTS=0 pick the rest. Run on the GPU machine from the repository root with .pack/ and .gl/
# carried.
set -u
. scripts/device-runs.sh
for s in ${SEEDS:-1 2 3 4 5 6 7 8}; do
  cold; $T "$BIN" tune $SPEC --backend cuda --budget 20 --seed $s --prior .pack/hub/*.json.gz --no-db --json ${JOBS:+-j $JOBS} > "$W/withdraw-$s${JOBS:+-j$JOBS}.json" 2> "$W/withdraw-$s${JOBS:+-j$JOBS}.err"
  cold; KT_WD=off $T "$BIN" tune $SPEC --backend cuda --budget 20 --seed $s --prior .pack/hub/*.json.gz --no-db --json ${JOBS:+-j $JOBS} > "$W/kept-$s${JOBS:+-j$JOBS}.json" 2> "$W/kept-$s${JOBS:+-j$JOBS}.err"
  cold; $T "$BIN" tune $SPEC --backend cuda --budget 20 --seed $s --strategy hybrid --no-prior --no-db --json ${JOBS:+-j $JOBS} > "$W/hybrid-$s${JOBS:+-j$JOBS}.json" 2> "$W/hybrid-$s${JOBS:+-j$JOBS}.err"
  pack
done
if [ "${YARDSTICK:-1}" = 1 ]; then
  cold; $T "$BIN" tune $SPEC --backend cuda --strategy hybrid --budget 300 --seed 1 --no-prior --no-db --json > "$W/yardstick.json" 2> "$W/yardstick.err"
  pack
fi
[ "${TESTS:-1}" = 1 ] && bash scripts/gpu-check.sh tests
