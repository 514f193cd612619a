#!/usr/bin/env bash
# Second call, on an H200, after the first call's findings were mended (CUDA 13's CCCL folder on
# NVRTC's include path, compile hints for removed intrinsics, failures explained by two
# parameters together): the study of run.sh again, then the GPU suites at this build.
set -u
bash docs/results/published-2026-12-02/run.sh
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/suites; rm -rf $W; mkdir -p $W
NEW=$PWD/.device/kerntune
{
  export KERNTUNE_CACHE_DIR=$W/cache
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/suites.tgz out.txt wgpu-devices.txt
