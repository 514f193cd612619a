#!/usr/bin/env bash
# Fourth call, on an H200: the bf16 GEMM (examples/hgemm/hgemm_bf16.toml, the CUDA kernel with
# -DUSE_BF16) at 4096³, every valid config; the conformance tests (f16 and bf16 GEMMs through
# CUDA, f16 through Vulkan) and the CUDA launch tests (the f16 kernel on CudaSlice<f16>).
set -u
. scripts/device-env.sh
W=/tmp/hgemm4; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
{
  echo "--- hgemm bf16, CUDA, 4096^3, exhaustive (cold)"
  KERNTUNE_CACHE_DIR=$W/cache /usr/bin/time -f "process wall %e s" .device/kerntune tune examples/hgemm/hgemm_bf16.toml --backend cuda --key M=4096,N=4096,K=4096 --no-db --json > $W/bf16.json 2> $W/bf16.err
  tail -1 $W/bf16.err
  KERNTUNE_CACHE_DIR=$W/cache /usr/bin/time -f "process wall %e s" .device/kerntune tune examples/hgemm/hgemm_bf16.toml --backend cuda --key M=4096,N=4096,K=4096 --no-db 2>&1 | tail -9
  echo "--- suites"
  for t in conformance launch; do
    echo "== $t"
    KERNTUNE_BIN=$PWD/.device/kerntune KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 --nocapture 2>&1 | grep -E "^test |test result|SKIPPED|panicked|source" | tail -40
  done
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/hgemm4.tgz out.txt gpu.txt bf16.json bf16.err
