#!/usr/bin/env bash
# Fifth call, on an H200 through Vulkan (wgpu), at the build where wgpu says its compiles are
# quick: call 4's tunes again (f32 matmul 2048³, --budget 20, hybrid, eight seeds, 16 compile
# threads), OLD (the build before this session) against NEW; the same for the f16 GEMM at
# 2048³ (WGSL f16); the exhaustive tunes for the optima; the GPU suites at this build.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/warm5; rm -rf $W; mkdir -p $W/wgpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune OLD=$PWD/.device/kerntune-old
export KERNTUNE_CACHE_DIR=$W/cache
{
  for k in matmul hgemm; do
    /usr/bin/time -f "wgpu $k 2048 exhaustive: process wall %e s" $NEW tune examples/$k/$k.toml --backend wgpu --key M=2048,N=2048,K=2048 --no-db --json > $W/wgpu/$k-exh.json
    for s in 1 2 3 4 5 6 7 8; do
      for b in old new; do
        bin=$OLD; [ $b = new ] && bin=$NEW
        /usr/bin/time -f "wgpu $k 2048 $b seed $s: process wall %e s" $bin tune examples/$k/$k.toml --backend wgpu --key M=2048,N=2048,K=2048 --budget 20 --strategy hybrid --seed $s -j 16 --no-db --json > $W/wgpu/$k-$b-$s.json
      done
    done
  done
  $NEW tune examples/matmul/matmul.toml --backend wgpu --key M=2048,N=2048,K=2048 --budget 20 --seed 1 -j 16 --no-db 2>&1 | tail -8
  echo "== suites"
  export KERNTUNE_CACHE_DIR=$W/suites
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/warm5.tgz out.txt gpu.txt wgpu wgpu-devices.txt
