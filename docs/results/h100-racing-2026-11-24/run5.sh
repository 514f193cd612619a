#!/usr/bin/env bash
# A warm SGEMM tune with trace logs of the worker's requests and the device thread's jobs.
set -u
O=$OUT; W=/tmp/w5; rm -rf $W; mkdir -p $W
mkdir -p $W/s; SGEMM_WARM=1 OUT=$W/s bash scripts/gpu-check.sh sgemm
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1); export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
for i in 1 2; do
rm -rf $KERNTUNE_CACHE_DIR/db.sqlite $KERNTUNE_CACHE_DIR/db.sqlite-*
NO_COLOR=1 KERNTUNE_LOG=kerntune_core=trace,kerntune_cuda=trace,kerntune=debug /usr/bin/time -f "wall %e s" .device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --top 3 > $W/warm-trace-$i.txt 2> $W/warm-trace-$i.err
done
cd /tmp && tar czf $O/w5.tgz w5
grep wall $W/*.err $W/s/sgemm.txt; wc -l $W/*.err
