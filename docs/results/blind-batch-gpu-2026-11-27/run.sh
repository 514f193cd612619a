#!/usr/bin/env bash
# A batch asked blind, on a GPU (2026-11-27, fifteenth session): the hub convolution tuned for
# 20 evaluations, cold, 16 compile threads, from two recorded spaces that rank this GPU's configs
# unlike it (the A4000's and the A6000's, .pack/hub/, copied from ../shared/spaces/gpus), by the
# build before the change (.device/kerntune-before: 94090cf, whose transfer search differs from
# 5b52092's only for sources that rank alike, which these two do not) and after it
# (.device/kerntune), against the hybrid search without priors, seeds 1-6, interleaved; then the
# GPU test suites. Run on the GPU machine from the repository root with .pack/ and .gl/ carried
# (binaries: `cargo build --release --features cuda -p kerntune && bash scripts/gpu-check.sh
# --prepare`, packed into .pack/device.tar.xz with the before binary).
set -u
. scripts/device-runs.sh
BEFORE=$PWD/.device/kerntune-before
P=".pack/hub/convolution_A4000.json.gz .pack/hub/convolution_A6000.json.gz"
for s in ${SEEDS:-1 2 3 4 5 6}; do
  cold_tune after-$s "$BIN" --seed $s --prior $P
  cold_tune before-$s "$BEFORE" --seed $s --prior $P
  cold_tune hybrid-$s "$BIN" --seed $s --strategy hybrid --no-prior
  pack
done
[ "${TESTS:-1}" = 1 ] && bash scripts/gpu-check.sh tests 2>&1 | tee "$W/tests.txt" | tail -30
pack
