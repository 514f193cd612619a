#!/usr/bin/env bash
# How many configs a tune keeps in flight, on a GPU (2026-11-27, sixteenth session): the hub
# convolution tuned cold from the six GPUs' recorded convolution spaces (.pack/hub/, copied from
# ../shared/spaces/gpus), which rank an H100's or H200's configs unlike it.
# 1. 20 evaluations with -j 16 and -j 4, each ask logged (KERNTUNE_LOG=kerntune_core=debug):
#    the flight the tune keeps, and the note on a short budget.
# 2. The note's advice: 48 evaluations (twice -j 16's flight) from the six against the hybrid
#    search without priors, seeds 1-3 interleaved.
# 3. The GPU test suites.
# Run on the GPU machine from the repository root with .pack/ and .gl/ carried (binaries:
# `cargo build --release --features cuda -p kerntune && bash scripts/gpu-check.sh --prepare`,
# packed into .pack/device.tar.xz).
set -u
. scripts/device-runs.sh
P=$(ls .pack/hub/*.json.gz)
for j in 16 4; do
  KERNTUNE_LOG=kerntune_core=debug NO_COLOR=1 cold_tune flight-j$j "$BIN" --seed 1 --prior $P -j $j
done
pack
for s in ${SEEDS:-1 2 3}; do
  BUDGET=48 cold_tune prior48-$s "$BIN" --seed $s --prior $P
  BUDGET=48 cold_tune hybrid48-$s "$BIN" --seed $s --strategy hybrid --no-prior
  pack
done
[ "${TESTS:-1}" = 1 ] && bash scripts/gpu-check.sh tests 2>&1 | tee "$W/tests.txt" | tail -30
pack
