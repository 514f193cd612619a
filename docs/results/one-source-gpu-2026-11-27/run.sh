#!/usr/bin/env bash
# One source on a GPU (2026-11-27, fourteenth session): the hub convolution tuned for 20
# evaluations, cold, from a single recorded space: the A4000's (.pack/hub/, copied from
# ../shared/spaces/gpus; the single source the simulation scores worst for an H200, 0.073 below
# the search without priors) and the one of the GPU of the same kind (on an H200 the H100's, on
# an H100 the H200's, from core/tests/data), seeds 1-3, against the hybrid search without priors;
# then the GPU test suites. Run on the GPU machine from the repository root with .pack/ and .gl/
# carried (binaries: `cargo build --release --features cuda -p kerntune && bash
# scripts/gpu-check.sh --prepare`, packed into .pack/device.tar.xz).
set -u
. scripts/device-runs.sh
echo "like: $LIKE" >> "$W/gpu.txt"
for s in ${SEEDS:-1 2 3}; do
  cold_tune a4000-$s "$BIN" --seed $s --prior .pack/hub/convolution_A4000.json.gz
  cold_tune like-$s "$BIN" --seed $s --prior $LIKE
  cold_tune hybrid-$s "$BIN" --seed $s --strategy hybrid --no-prior
  pack
done
[ "${TESTS:-1}" = 1 ] && bash scripts/gpu-check.sh tests 2>&1 | tee "$W/tests.txt" | tail -30
pack
