#!/usr/bin/env bash
# Third call, on an H200: call 2's cold tunes again with the order of the builds reversed (NEW
# then OLD for each seed), to see whether the faster compiles NEW showed there follow the build
# or the order.
set -u
. scripts/device-env.sh
W=/tmp/warm3; rm -rf $W; mkdir -p $W/cold
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune OLD=$PWD/.device/kerntune-old
{
  for s in 1 2 3; do
    for b in new old; do
      bin=$OLD; [ $b = new ] && bin=$NEW
      KERNTUNE_CACHE_DIR=$W/c-h-$b-$s /usr/bin/time -f "cold hgemm 4096 $b seed $s: process wall %e s" $bin tune examples/hgemm/hgemm.toml --backend cuda --key M=4096,N=4096,K=4096 --budget 20 --seed $s --no-db --json > $W/cold/hgemm-$b-$s.json
      KERNTUNE_CACHE_DIR=$W/c-m-$b-$s /usr/bin/time -f "cold matmul 2048 $b seed $s: process wall %e s" $bin tune examples/matmul/matmul.toml --backend cuda --key M=2048,N=2048,K=2048 --budget 20 --seed $s --no-db --json > $W/cold/matmul-$b-$s.json
    done
  done
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/warm3.tgz out.txt gpu.txt cold
