#!/usr/bin/env bash
# The last call, at the session's final build (compute processes only): vk.sh again, both
# shared-GPU tests, and every other suite but the long `gpu` one (conformance, wgpu's unit tests,
# open, launch — the runtime handle's change among what they run — and wgpu devices).
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export KERNTUNE_BIN=$PWD/.device/kerntune KERNTUNE_REQUIRE_DEVICE=cuda,wgpu
bash docs/results/shared-gpu-vulkan-2026-12-06/vk.sh > /dev/null 2>&1
mkdir -p $OUT/final && mv $OUT/vk.txt $OUT/final/
{
  KERNTUNE_CACHE_DIR=/tmp/fs timeout 200 .device/tests/gpu --test-threads=1 another_process 2>&1 | grep -E "^test |test result|panicked"
  for t in conformance wgpu-lib open launch; do
    KERNTUNE_CACHE_DIR=/tmp/fs-$t timeout 200 .device/tests/$t --test-threads=1 > $OUT/final/suite-$t.txt 2>&1; echo "$t: exit $?"
    grep -E "^test result|FAILED|panicked" $OUT/final/suite-$t.txt | sed "s/^/$t: /"
  done
  timeout 100 .device/tests/wgpu-devices > $OUT/final/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $OUT/final/final.txt 2>&1
grep -E "C\+G|shared|exit" $OUT/final/vk.txt | cut -c1-300
cat $OUT/final/final.txt
