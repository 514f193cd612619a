#!/usr/bin/env bash
# Sixth call, on an H200, at the session's last build: the comparison kernels' source as written
# over lines (NVRTC compiles it), the f16 GEMM warm and the wrong kernel again, and the GPU
# suites.
set -u
. scripts/device-env.sh
W=/tmp/hgemm6; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
export KERNTUNE_CACHE_DIR=$W/cache
{
  for i in cold warm; do /usr/bin/time -f "hgemm $i process wall %e s" .device/kerntune tune examples/hgemm/hgemm.toml --backend cuda --key M=4096,N=4096,K=4096 --no-db 2>&1 | tail -7; done
  rm -rf /tmp/hg && cp -r examples/hgemm /tmp/hg && sed -i 's/C\[r \* N + c\] = TO_ELEM(Cs\[warp\]\[e\]);/C[r * N + c] = TO_ELEM(Cs[warp][e] * (BK == 32 ? 1.003f : 1.0f));/' /tmp/hg/hgemm.cu
  .device/kerntune tune /tmp/hg/hgemm.toml --backend cuda --key M=1024,N=1024,K=1024 --no-db --strategy random --budget 12 --seed 2 2>&1 | grep -A1 "failures"
  for t in conformance gpu wgpu-lib open launch; do
    echo "== $t"
    KERNTUNE_BIN=$PWD/.device/kerntune KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test |test result|panicked" | tail -40
  done
  echo "== wgpu-devices"; .device/tests/wgpu-devices --test-threads=1 > $W/wgpu-devices.txt 2>&1; echo "exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/hgemm6.tgz out.txt gpu.txt wgpu-devices.txt
