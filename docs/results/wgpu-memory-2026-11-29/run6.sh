#!/bin/bash
# Call 6: the clock guard's first check loading at least 0.6 s (and saying when the clock rose
# only later): the worker-mode Vulkan triad at 2 x 1020 MiB that timed 2.23-2.44 ms before
# (calls 1-5), with the clocks sampled; then every GPU suite at this build.
. scripts/device-env.sh; export KERNTUNE_CACHE_DIR=/tmp/kc
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
tune() {  # $1 label, then environment
  local label=$1; shift
  nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv,noheader -lms 50 > $OUT/smi-$label.csv &
  local smi=$!
  echo "--- $label $*"
  env "$@" /usr/bin/time -f "wall %e s" .device/kerntune tune examples/triad/triad.toml --backend wgpu --no-db --key N=267386880 --strategy random --budget 4 --seed 1 2>&1 | grep -E "^winner|note: clock|^wall" | cut -c1-300
  kill $smi; wait $smi 2>/dev/null
  awk -F', ' '$6 + 0 > 0 { print $3 }' $OUT/smi-$label.csv | sort | uniq -c | sort -rn | head -3
}
{
tune worker1; tune worker2 KERNTUNE_LOG=kerntune_wgpu::clock=debug; tune inproc KERNTUNE_WGPU_ISOLATION=0
echo "--- matmul 2048, worker"
.device/kerntune tune examples/matmul/matmul.toml --backend wgpu --no-db --key M=2048,N=2048,K=2048 --strategy random --budget 30 --seed 1 2>&1 | grep -E "^winner|note: clock|wall time" | cut -c1-300
} > $OUT/guard.txt 2>&1
KERNTUNE_BIN=$PWD/.device/kerntune TESTS=".device/tests/conformance .device/tests/gpu .device/tests/wgpu-lib .device/tests/wgpu-devices .device/tests/open .device/tests/launch" bash scripts/gpu-check.sh tests > $OUT/tests-run.txt 2>&1
