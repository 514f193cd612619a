#!/usr/bin/env bash
# Call 1. Warm SGEMM 410: the previous build (6d7049a: the worker's trace log shows launch times) as
# .device/kerntune-before against the verification-excess race + posted loads as .device/kerntune,
# interleaved; then one traced run of each.
set -u
O=$OUT; W=/tmp/w1; rm -rf $W; mkdir -p $W
lscpu > $W/lscpu.txt 2>&1; nproc >> $W/lscpu.txt
mkdir -p $W/s; SGEMM_WARM=0 OUT=$W/s bash scripts/gpu-check.sh sgemm
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1); export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
for i in 1 2 3 4; do
  for m in before after; do
    rm -rf $KERNTUNE_CACHE_DIR/db.sqlite $KERNTUNE_CACHE_DIR/db.sqlite-*
    b=.device/kerntune; [ $m = before ] && b=.device/kerntune-before
    /usr/bin/time -f "wall %e s" $b tune benches/sgemm/sgemm.toml --backend cuda --top 3 > $W/$m-$i.txt 2>&1
  done
done
for m in before after; do
  rm -rf $KERNTUNE_CACHE_DIR/db.sqlite $KERNTUNE_CACHE_DIR/db.sqlite-*
  b=.device/kerntune; [ $m = before ] && b=.device/kerntune-before
  KERNTUNE_LOG=kerntune_core=trace,kerntune=debug,kerntune::autotuning=info /usr/bin/time -f "wall %e s" $b tune benches/sgemm/sgemm.toml --backend cuda --top 3 > $W/$m-trace.txt 2> $W/$m-trace.log
  $b db export --out $W/$m-db.json 2>/dev/null; gzip $W/$m-db.json $W/$m-trace.log
done
cd /tmp && tar czf $O/w1.tgz w1
