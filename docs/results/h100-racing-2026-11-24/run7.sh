#!/usr/bin/env bash
# Warm SGEMM 410: the worker process (default) against in process (KERNTUNE_CUDA_ISOLATION=0), interleaved.
set -u
O=$OUT; W=/tmp/w7; rm -rf $W; mkdir -p $W
mkdir -p $W/s; SGEMM_WARM=0 OUT=$W/s bash scripts/gpu-check.sh sgemm
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1); export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
for i in 1 2 3; do
  for m in worker in-process; do
    rm -rf $KERNTUNE_CACHE_DIR/db.sqlite $KERNTUNE_CACHE_DIR/db.sqlite-*
    iso=1; [ $m = in-process ] && iso=0
    KERNTUNE_CUDA_ISOLATION=$iso /usr/bin/time -f "wall %e s" .device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --top 3 > $W/$m-$i.txt 2>&1
  done
done
cd /tmp && tar czf $O/w7.tgz w7
for f in $W/*-?.txt; do echo "$(basename $f): $(grep -o 'wall time [0-9.]* s' $f) / $(grep -o '^wall [0-9.]* s' $f) / $(grep -o '^winner: [^ ]*' $f)"; done
