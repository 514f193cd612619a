#!/bin/bash
# Call 7: large blobs copied into the shared-memory files through a mapping by 8 threads
# instead of pwrite (which tmpfs serialises). Before (1395ec6's build, `-before`) and after,
# interleaved: core's worker_start bench (1, 2, 4, 8 workers started at once with a 3 GiB
# problem; no GPU), then the CUDA triad at N = 2^30 (8 GiB of problem) and the Vulkan triad at
# 2 x 1020 MiB on the whole H200, with the workers' start from the debug log.
. scripts/device-env.sh; export KERNTUNE_CACHE_DIR=/tmp/kc
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
{ for r in 1 2; do echo "--- before"; .device/worker_start-before 3 1,2,4,8; echo "--- after"; .device/worker_start 3 1,2,4,8; done; } > $OUT/worker-start.txt 2>&1
tune() {  # $1 binary, $2 backend, $3 N
  echo "--- $1 $2 N=$3"
  KERNTUNE_LOG=kerntune_core=debug /usr/bin/time -f "wall %e s" .device/$1 tune examples/triad/triad.toml --backend $2 --no-db --key N=$3 --strategy random --budget 4 --seed 1 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g' | grep -E "problem written|problem received|worker initialised|search done|^winner|^wall|error" | sed 's/^2026-11-29T//' | cut -c1-200
}
{ for r in 1 2; do tune kerntune-before cuda 1073741824; tune kerntune cuda 1073741824; done
  for r in 1 2; do tune kerntune-before wgpu 267386880; tune kerntune wgpu 267386880; done; } > $OUT/tunes.txt 2>&1
