#!/usr/bin/env bash
# First call, on an H200: one kernel brute-forced at several problem sizes on one GPU (the
# f32 matmul example and the f16 tensor-core GEMM), each size's results exported as a T4 file
# for `kerntune simulate --leave-one-out` (the other sizes as its priors); then a size never
# tuned, with a budget of 20, learning from the database that holds the others, against the
# same tune with --no-prior, and its own exhaustive tune for the optimum.
set -u
. scripts/device-env.sh
W=/tmp/sizes; rm -rf $W; mkdir -p $W/db $W/t4 $W/new
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
export KERNTUNE_CACHE_DIR=$W/cache
K=$PWD/.device/kerntune
name() { echo "$1" | tr ',=' '_-'; }
sweep() { # spec kernel keys...
  local spec=$1 k=$2; shift 2
  for key in "$@"; do
    n=$(name $key)
    /usr/bin/time -f "$k $key exhaustive: process wall %e s" $K tune $spec --backend cuda --key $key --db $W/db/${k}_$n.sqlite 2>&1 | tail -3
    $K db export --format t4 --db $W/db/${k}_$n.sqlite --out $W/t4/${k}_$n.json
  done
  $K db merge --db $W/db/$k-all.sqlite $W/db/${k}_*.sqlite 2>&1 | tail -1
}
fresh() { # spec kernel key seeds...
  local spec=$1 k=$2 key=$3; shift 3
  n=$(name $key)
  /usr/bin/time -f "$k $key exhaustive (the optimum): process wall %e s" $K tune $spec --backend cuda --key $key --db $W/new/${k}_$n-exh.sqlite 2>&1 | tail -3
  $K db export --format t4 --db $W/new/${k}_$n-exh.sqlite --out $W/t4/${k}_$n-new.json
  for s in "$@"; do
    cp $W/db/$k-all.sqlite $W/new/${k}_$n-prior-$s.sqlite
    $K tune $spec --backend cuda --key $key --budget 20 --seed $s --db $W/new/${k}_$n-prior-$s.sqlite --json > $W/new/${k}_$n-prior-$s.json 2> $W/new/${k}_$n-prior-$s.err
    $K tune $spec --backend cuda --key $key --budget 20 --seed $s --db $W/new/${k}_$n-none-$s.sqlite --no-prior --json > $W/new/${k}_$n-none-$s.json 2> $W/new/${k}_$n-none-$s.err
    echo "$k $key seed $s done"
  done
}
{
  sweep examples/hgemm/hgemm.toml hgemm M=1024,N=1024,K=1024 M=2048,N=2048,K=2048 M=4096,N=4096,K=4096 M=8192,N=8192,K=1024 M=1024,N=8192,K=4096 M=4096,N=1024,K=8192
  fresh examples/hgemm/hgemm.toml hgemm M=3072,N=3072,K=3072 1 2 3 4 5
  sweep examples/matmul/matmul.toml matmul M=512,N=512,K=512 M=1024,N=1024,K=1024 M=2048,N=2048,K=2048 M=4096,N=4096,K=512 M=1024,N=8192,K=1024 M=8192,N=512,K=2048
  fresh examples/matmul/matmul.toml matmul M=1536,N=1536,K=1536 1 2 3 4 5
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/sizes1.tgz out.txt gpu.txt t4 new db/*-all.sqlite
