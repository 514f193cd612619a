#!/bin/bash
# Call 9: a reference made on the device reads back only the buffers verification compares
# (C of a GEMM, not A and B). The example matmul at 8192^3 through CUDA with the default
# config's outputs as the reference, before (80e1348's build) and after, interleaved; then
# the GPU suites that run a device reference (conformance, gpu) and wgpu's unit tests.
. scripts/device-env.sh; export KERNTUNE_CACHE_DIR=/tmp/kc
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
tune() {  # $1 binary
  echo "--- $1"
  KERNTUNE_LOG=kerntune_core=debug /usr/bin/time -f "wall %e s, max RSS %M KB" .device/$1 tune examples/matmul/matmul.toml --backend cuda --no-db --key M=8192,N=8192,K=8192 --reference default --strategy random --budget 10 --seed 1 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g' | grep -E "worker initialised|reference|search done|^winner|^wall|error" | sed 's/^2026-11-29T//' | cut -c1-220
}
{ tune kerntune-before; tune kerntune; tune kerntune-before; tune kerntune; } > $OUT/reference.txt 2>&1
KERNTUNE_BIN=$PWD/.device/kerntune TESTS=".device/tests/conformance .device/tests/gpu .device/tests/wgpu-lib" bash scripts/gpu-check.sh tests > $OUT/tests-run.txt 2>&1
