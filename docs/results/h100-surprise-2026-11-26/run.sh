#!/usr/bin/env bash
# The surprise rule on a GPU outside the fleet: the hub convolution tuned for 20 evaluations
# from the six GPUs' recorded spaces (../shared/spaces/gpus/convolution_*.json.gz, copied to
# .pack/hub/), cold (kerntune's compile cache and NVRTC's emptied before each run), seeds
# 1-8, three ways in turn: this build (surprise: turns shared, and picks in flight kept to
# half the flight while they are); the same binary with the rule off (KT_SP=off, a switch in
# the device build only, not committed: the transfer search of the previous commit); the
# hybrid search without priors. Then the yardstick (300 evaluations without priors) and the
# GPU test suites. JOBS=4 runs every tune with -j 4 (file names end in -j4); SEEDS,
# YARDSTICK=0 and TESTS=0 pick the rest. Run on the GPU machine from the repository root
# with .pack/ and .gl/ carried.
set -u
PACK_NAME="runs${JOBS:+-j$JOBS}"
. scripts/device-runs.sh
# The search with the rule off: .device/kerntune-prev when there is one (the fourth call: a
# build of b4681c5, the commit before the rule), else this binary with KT_SP=off (the first
# three calls: a switch only their device build had).
if [ -x .device/kerntune-prev ]; then OFFBIN=$PWD/.device/kerntune-prev OFF=; else OFFBIN=$BIN OFF=KT_SP=off; fi
X=${JOBS:+-j$JOBS}
for s in ${SEEDS:-1 2 3 4 5 6 7 8}; do
  cold; $T "$BIN" tune $SPEC --backend cuda --budget 20 --seed $s --prior .pack/hub/*.json.gz --no-db --json ${JOBS:+-j $JOBS} > "$W/surprise-$s$X.json" 2> "$W/surprise-$s$X.err"
  cold; env $OFF $T "$OFFBIN" tune $SPEC --backend cuda --budget 20 --seed $s --prior .pack/hub/*.json.gz --no-db --json ${JOBS:+-j $JOBS} > "$W/off-$s$X.json" 2> "$W/off-$s$X.err"
  cold; $T "$BIN" tune $SPEC --backend cuda --budget 20 --seed $s --strategy hybrid --no-prior --no-db --json ${JOBS:+-j $JOBS} > "$W/hybrid-$s$X.json" 2> "$W/hybrid-$s$X.err"
  pack
done
if [ "${YARDSTICK:-1}" = 1 ]; then
  cold; $T "$BIN" tune $SPEC --backend cuda --strategy hybrid --budget 300 --seed 1 --no-prior --no-db --json > "$W/yardstick.json" 2> "$W/yardstick.err"
  pack
fi
[ "${TESTS:-1}" = 1 ] && bash scripts/gpu-check.sh tests
pack
