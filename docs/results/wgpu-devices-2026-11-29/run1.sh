#!/bin/bash
# Call 1 (2026-11-29, twenty-eighth session): the wgpu-devices assertion that failed once
# (run eight times, each printing what the second device measured: kept, or re-measured by the
# first in the final round); `kerntune devices` with the adapter's memory; the worker-mode
# Vulkan triad at 2 x 1020 MiB with debug logs and clocks, to find where the worker's GPU idles
# before its first timing; then every GPU suite at this build.
. scripts/device-env.sh; export KERNTUNE_CACHE_DIR=/tmp/kc
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
{
for i in 1 2 3 4 5 6 7 8; do
  echo "--- run $i"
  .device/tests/wgpu-devices 2>&1 | grep -E "wgpu devices|panicked|assert" | cut -c1-600
done
} > $OUT/devices-test.txt 2>&1
{ .device/kerntune devices --backend wgpu; .device/kerntune devices --backend cuda; } 2>&1 | grep -E "^\[|global_mem" > $OUT/devices.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu,memory.used --format=csv,noheader -lms 20 > $OUT/smi.csv &
smi=$!
sleep 0.3
date +%H:%M:%S.%N > $OUT/trace.txt
KERNTUNE_LOG=debug /usr/bin/time -f "wall %e s" .device/kerntune tune examples/triad/triad.toml --backend wgpu --no-db --key N=267386880 --strategy random --budget 4 --seed 1 >> $OUT/trace.txt 2>&1
sleep 0.3; kill $smi; wait $smi 2>/dev/null
KERNTUNE_BIN=$PWD/.device/kerntune TESTS=".device/tests/conformance .device/tests/gpu .device/tests/wgpu-lib .device/tests/wgpu-devices .device/tests/open .device/tests/launch" bash scripts/gpu-check.sh tests > $OUT/tests-run.txt 2>&1
