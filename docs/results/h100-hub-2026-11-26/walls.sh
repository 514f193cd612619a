#!/usr/bin/env bash
# What `-j 4` costs in wall time: the transfer tune of run.sh (20 evaluations from the six GPUs'
# recorded spaces) at 16 and at 4 compile threads, cold (kerntune's compile cache and NVRTC's
# own emptied before each run), seeds 1-4, alternating.
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
SPEC=examples/convolution/convolution_hub.toml
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
for s in 1 2 3 4; do
  for j in 16 4; do
    rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d)
    /usr/bin/time -f "wall %e s" "$BIN" tune $SPEC --backend cuda --budget 20 --seed $s --prior .pack/hub/*.json.gz --no-db --json -j $j > "$OUT/cold-$s-j$j.json" 2> "$OUT/cold-$s-j$j.err"
  done
done
