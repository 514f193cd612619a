#!/usr/bin/env bash
# On an H200: the half-precision GEMM (examples/hgemm: f16 in and out, f32 accumulation) through
# CUDA (WMMA tensor cores; the source includes cuda_fp16.h and mma.h, found through the
# toolkit's include folder) at 4096³, every valid config; the f32 matmul example at the same
# size for comparison (budget 60, random); the half-precision GEMM through Vulkan (wgpu, WGSL's
# f16) at 2048³; then the GPU test suites (the new conformance test among them).
set -u
. scripts/device-env.sh
W=/tmp/hgemm; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
ls -d /usr/local/cuda/include/cuda_fp16.h /usr/local/cuda/include/mma.h >> $W/gpu.txt 2>&1
{
  echo "--- hgemm, CUDA, 4096^3, exhaustive"
  /usr/bin/time -f "process wall %e s" .device/kerntune tune examples/hgemm/hgemm.toml --backend cuda --key M=4096,N=4096,K=4096 --no-db --json > $W/hgemm-cuda.json 2> $W/hgemm-cuda.err
  tail -5 $W/hgemm-cuda.err
  .device/kerntune tune examples/hgemm/hgemm.toml --backend cuda --key M=4096,N=4096,K=4096 --no-db 2>&1 | tail -14
  echo "--- matmul (f32), CUDA, 4096^3, random 60"
  .device/kerntune tune examples/matmul/matmul.toml --backend cuda --key M=4096,N=4096,K=4096 --no-db --strategy random --budget 60 2>&1 | tail -8
  echo "--- hgemm, wgpu (Vulkan), 2048^3, random 30"
  .device/kerntune tune examples/hgemm/hgemm.toml --backend wgpu --key M=2048,N=2048,K=2048 --no-db --strategy random --budget 30 2>&1 | tail -10
  echo "--- suites"
  for t in conformance gpu wgpu-lib open launch; do
    echo "== $t"
    KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test |test result|SKIPPED|panicked" | tail -40
  done
  echo "== wgpu-devices"; .device/tests/wgpu-devices --test-threads=1 > $W/wgpu-devices.txt 2>&1; echo "exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/hgemm.tgz out.txt gpu.txt hgemm-cuda.json hgemm-cuda.err wgpu-devices.txt
