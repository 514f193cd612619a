#!/usr/bin/env bash
# The pick for a source on a GPU (2026-11-27, thirteenth session): the hub convolution tuned for
# 20 evaluations, cold, from the six GPUs' recorded spaces (copied to .pack/hub/) and the
# recorded space of the GPU of the same kind in core/tests/data (on an H200 the H100's, on an
# H100 the H200's), seeds 1-3, against the hybrid search without priors; then the GPU test
# suites. Run on the GPU machine from the repository root with .pack/ and .gl/ carried
# (binaries: `cargo build --release --features cuda -p kerntune && bash scripts/gpu-check.sh
# --prepare`, packed into .pack/device.tar.xz).
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
SPEC=examples/convolution/convolution_hub.toml
W=/tmp/kt-runs
mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$W/gpu.txt" 2>&1
nproc >> "$W/gpu.txt"
if grep -q H200 "$W/gpu.txt"; then LIKE=core/tests/data/convolution_H100.json.gz; else LIKE=core/tests/data/convolution_H200.json.gz; fi
echo "like: $LIKE" >> "$W/gpu.txt"
pack() { tar czf "$OUT/runs.tgz" -C $W .; }
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; CUDA_CACHE_PATH=$(mktemp -d); export CUDA_CACHE_PATH; }
T="/usr/bin/time -f wall_%e_s"
for s in ${SEEDS:-1 2 3}; do
  cold; $T "$BIN" tune $SPEC --backend cuda --budget 20 --seed $s --prior .pack/hub/*.json.gz $LIKE --no-db --json > "$W/prior-$s.json" 2> "$W/prior-$s.err"
  cold; $T "$BIN" tune $SPEC --backend cuda --budget 20 --seed $s --strategy hybrid --no-prior --no-db --json > "$W/hybrid-$s.json" 2> "$W/hybrid-$s.err"
  pack
done
[ "${TESTS:-1}" = 1 ] && bash scripts/gpu-check.sh tests
pack
