#!/usr/bin/env bash
# A regression check on a GPU of the build at the end of the 2026-11-27 sessions (the transfer
# search now built through `Transfer::adaptive` in the tuner): the GPU test suites, then the
# hub convolution tuned for 20 evaluations from the six GPUs' recorded spaces (copied to
# .pack/hub/), cold, seeds 1-3, against the hybrid search without priors. Run on the GPU
# machine from the repository root with .pack/ and .gl/ carried (binaries: `bash
# scripts/gpu-check.sh --prepare`, packed into .pack/device.tar.xz).
set -u
. scripts/device-runs.sh
for s in ${SEEDS:-1 2 3}; do
  cold_tune prior-$s "$BIN" --seed $s --prior .pack/hub/*.json.gz
  cold_tune hybrid-$s "$BIN" --seed $s --strategy hybrid --no-prior
  pack
done
[ "${TESTS:-1}" = 1 ] && bash scripts/gpu-check.sh tests
pack
