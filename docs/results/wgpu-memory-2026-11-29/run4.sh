#!/bin/bash
# Call 4: call 3 found the slow Vulkan triad only with kernels in a worker process (the default)
# and nothing else on the GPU; in-process, or with any CUDA process beside, 0.90 ms. Is it a second
# idle Vulkan device (the tuner's own, which compiles)? `idle` (a scratch program, not kept: it
# opens the adapter's device, allocates 64 MiB and sleeps) beside an in-process tune. Is it the
# kernel's duration or the buffers' size? Sizes between 200 M (0.68 ms, fast) and 255 Mi.
. scripts/device-env.sh; export KERNTUNE_CACHE_DIR=/tmp/kc
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
tune() {  # $1 N, then environment
  local n=$1; shift
  echo "--- wgpu N=$n $*"
  env "$@" .device/kerntune tune examples/triad/triad.toml --backend wgpu --no-db --key N=$n --strategy random --budget 4 --seed 1 2>&1 | grep -E "^winner|^│ [0-9]|clock guard|note:" | cut -c1-120
}
{
nvidia-smi compute-policy -l 2>&1 | head -8
echo "=== empty GPU, worker"
for n in 220000000 240000000 255000000 267386880; do tune $n; done
echo "=== in-process"; tune 267386880 KERNTUNE_WGPU_ISOLATION=0
echo "=== in-process, an idle Vulkan device in another process"
rm -f /tmp/idle.ready; .device/idle 40 & pid=$!
for i in $(seq 1 100); do [ -f /tmp/idle.ready ] && break; sleep 0.1; done
tune 267386880 KERNTUNE_WGPU_ISOLATION=0; tune 67108864 KERNTUNE_WGPU_ISOLATION=0
echo "=== worker, with the idle device too"; tune 267386880
kill $pid; wait $pid 2>/dev/null
echo "=== in-process again"; tune 267386880 KERNTUNE_WGPU_ISOLATION=0
echo "=== worker, KERNTUNE_LOG=kerntune_wgpu=debug"; tune 267386880 KERNTUNE_LOG=kerntune_wgpu=debug
} > $OUT/idle.txt 2>&1
