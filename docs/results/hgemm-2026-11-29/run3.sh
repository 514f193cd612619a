#!/usr/bin/env bash
# Third call, on an H200: where the half-precision GEMM's 55 s go. The build of call 2
# (.device/kerntune-call2: f16 outputs compared on the host one element at a time) and this
# build (the comparison on every core) alternating, twice each, exhaustive at 4096³ with a warm
# compile cache (filled by a first run), with --json.
set -u
. scripts/device-env.sh
W=/tmp/hgemm3; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
export KERNTUNE_CACHE_DIR=$W/cache
run() { /usr/bin/time -f "$1 $2 process wall %e s" .device/$1 tune examples/hgemm/hgemm.toml --backend cuda --key M=4096,N=4096,K=4096 --no-db --json > $W/$1-$2.json 2> $W/$1-$2.err; tail -1 $W/$1-$2.err; }
{
  run kerntune warmup
  for i in 1 2; do run kerntune-call2 $i; run kerntune $i; done
} > $W/out.txt 2>&1
cat $W/out.txt
for f in $W/*.json; do python3 -c "
import json,sys;d=json.load(open(sys.argv[1]))[0];print(sys.argv[1].split('/')[-1], 'wall', round(d['wall_seconds'],2), 'winner', d['winner']['params'], 'failures', d['failures'])" $f; done >> $W/out.txt
tail -5 $W/out.txt
cd $W && tar czf $OUT/hgemm3.tgz out.txt gpu.txt *.json *.err
