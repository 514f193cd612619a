#!/usr/bin/env bash
# The pick for a source on a GPU (2026-11-27, thirteenth session): the hub convolution tuned for
# 20 evaluations, cold, from the six GPUs' recorded spaces (copied to .pack/hub/) and the
# recorded space of the GPU of the same kind in core/tests/data (on an H200 the H100's, on an
# H100 the H200's), seeds 1-3, against the hybrid search without priors; then the GPU test
# suites. Run on the GPU machine from the repository root with .pack/ and .gl/ carried
# (binaries: `cargo build --release --features cuda -p kerntune && bash scripts/gpu-check.sh
# --prepare`, packed into .pack/device.tar.xz).
set -u
. scripts/device-runs.sh
echo "like: $LIKE" >> "$W/gpu.txt"
for s in ${SEEDS:-1 2 3}; do
  cold_tune prior-$s "$BIN" --seed $s --prior .pack/hub/*.json.gz $LIKE
  cold_tune hybrid-$s "$BIN" --seed $s --strategy hybrid --no-prior
  pack
done
[ "${TESTS:-1}" = 1 ] && bash scripts/gpu-check.sh tests
pack
