#!/usr/bin/env bash
# Second call, on an H200: the half-precision GEMM at 4096³ again (every valid config) with the
# FP16 tensor peak in the CUDA limits and the static-shared restriction in the spec; the same
# spec without that restriction (a copy in /tmp) to see a config over 48 KiB of static shared
# memory reported as out of resources; then the GPU suites, gpu.rs with the packed binary.
set -u
. scripts/device-env.sh
W=/tmp/hgemm2; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
{
  echo "--- hgemm, CUDA, 4096^3, exhaustive (cold: fresh compile cache)"
  KERNTUNE_CACHE_DIR=$W/cache /usr/bin/time -f "process wall %e s" .device/kerntune tune examples/hgemm/hgemm.toml --backend cuda --key M=4096,N=4096,K=4096 --no-db --json > $W/hgemm-cuda.json 2> $W/hgemm-cuda.err
  tail -2 $W/hgemm-cuda.err
  KERNTUNE_CACHE_DIR=$W/cache .device/kerntune tune examples/hgemm/hgemm.toml --backend cuda --key M=4096,N=4096,K=4096 --no-db 2>&1 | tail -16
  echo "--- the spec without the static-shared restriction"
  rm -rf /tmp/hg && cp -r examples/hgemm /tmp/hg && grep -v "<= 49152" examples/hgemm/hgemm.toml > /tmp/hg/hgemm.toml
  KERNTUNE_CACHE_DIR=$W/cache .device/kerntune tune /tmp/hg/hgemm.toml --backend cuda --key M=4096,N=4096,K=4096 --no-db 2>&1 | tail -7
  echo "--- suites"
  for t in conformance gpu wgpu-lib open launch; do
    echo "== $t"
    KERNTUNE_BIN=$PWD/.device/kerntune KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test |test result|SKIPPED|panicked" | tail -40
  done
  echo "== wgpu-devices"; .device/tests/wgpu-devices --test-threads=1 > $W/wgpu-devices.txt 2>&1; echo "exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/hgemm2.tgz out.txt gpu.txt hgemm-cuda.json hgemm-cuda.err wgpu-devices.txt
