#!/usr/bin/env bash
# Second call, on an H200, at this session's build: (1) a cold tune is sized as before: the f16
# GEMM at 4096³ and the f32 matmul at 2048³, --budget 20, hybrid, each run from an empty compile
# cache, OLD and NEW, three seeds; (2) a tune run again with a smaller budget than its stored
# records keeps the best of them (matmul 2048³, --budget 30, then --force --budget 8); (3) the
# GPU suites.
set -u
. scripts/device-env.sh
W=/tmp/warm2; rm -rf $W; mkdir -p $W/cold $W/resume
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune OLD=$PWD/.device/kerntune-old
{
  for s in 1 2 3; do
    for b in old new; do
      bin=$OLD; [ $b = new ] && bin=$NEW
      KERNTUNE_CACHE_DIR=$W/c-h-$b-$s /usr/bin/time -f "cold hgemm 4096 $b seed $s: process wall %e s" $bin tune examples/hgemm/hgemm.toml --backend cuda --key M=4096,N=4096,K=4096 --budget 20 --seed $s --no-db --json > $W/cold/hgemm-$b-$s.json
      KERNTUNE_CACHE_DIR=$W/c-m-$b-$s /usr/bin/time -f "cold matmul 2048 $b seed $s: process wall %e s" $bin tune examples/matmul/matmul.toml --backend cuda --key M=2048,N=2048,K=2048 --budget 20 --seed $s --no-db --json > $W/cold/matmul-$b-$s.json
    done
  done
  export KERNTUNE_CACHE_DIR=$W/cache
  $NEW tune examples/matmul/matmul.toml --backend cuda --key M=2048,N=2048,K=2048 --budget 30 --seed 1 --db $W/resume/db.sqlite 2>&1 | grep -E "^winner|^space"
  $NEW tune examples/matmul/matmul.toml --backend cuda --key M=2048,N=2048,K=2048 --budget 8 --seed 2 --force --db $W/resume/db.sqlite 2>&1 | grep -E "^winner|^space"
  $OLD tune examples/matmul/matmul.toml --backend cuda --key M=2048,N=2048,K=2048 --budget 8 --seed 2 --force --db $W/resume/db.sqlite 2>&1 | grep -E "^winner|^space"
  echo "== suites"
  export KERNTUNE_CACHE_DIR=$W/suites
  export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/warm2.tgz out.txt gpu.txt cold resume wgpu-devices.txt
