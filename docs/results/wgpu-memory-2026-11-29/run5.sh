#!/bin/bash
# Call 5: the clocks and power during the slow (worker) and fast (in-process) Vulkan triad at
# 2 x 1020 MiB on an otherwise empty H200, sampled raw by nvidia-smi every 20 ms.
. scripts/device-env.sh; export KERNTUNE_CACHE_DIR=/tmp/kc
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
tune() {  # $1 label, then environment
  local label=$1; shift
  nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,utilization.gpu,utilization.memory --format=csv,noheader -lms 20 > $OUT/smi-$label.csv &
  local smi=$!
  sleep 0.5
  echo "--- $label $*"
  env "$@" .device/kerntune tune examples/triad/triad.toml --backend wgpu --no-db --key N=267386880 --strategy random --budget 4 --seed 1 2>&1 | grep -E "^winner" | cut -c1-120
  sleep 0.5; kill $smi; wait $smi 2>/dev/null
  echo "pstate sm mem: count over the tune's samples with utilization above 0"
  awk -F', ' '$6 + 0 > 0 { print $2, $3, $4 }' $OUT/smi-$label.csv | sort | uniq -c | sort -rn | head -5
}
{
tune worker1; tune inproc1 KERNTUNE_WGPU_ISOLATION=0; tune worker2; tune inproc2 KERNTUNE_WGPU_ISOLATION=0
} > $OUT/clocks.txt 2>&1
