#!/usr/bin/env bash
# Fourth call, on an H200, at the session's final build: the GPU suites only (call 3 found two
# wgpu unit tests comparing the device screen's verdict with the element comparison alone).
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/partial4; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
{
  export KERNTUNE_CACHE_DIR=$W/suites
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/partial4.tgz out.txt gpu.txt wgpu-devices.txt
