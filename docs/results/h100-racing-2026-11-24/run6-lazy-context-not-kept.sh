#!/usr/bin/env bash
# The parent's CUDA context made on first use: GPU tests, then SGEMM cold/warm with a debug log.
set -u
O=$OUT; W=/tmp/w6; rm -rf $W; mkdir -p $W
mkdir -p $W/tests; OUT=$W/tests bash scripts/gpu-check.sh tests
mkdir -p $W/s; SGEMM_WARM=3 OUT=$W/s bash scripts/gpu-check.sh sgemm
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1); export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
for i in 1 2; do
rm -rf $KERNTUNE_CACHE_DIR/db.sqlite $KERNTUNE_CACHE_DIR/db.sqlite-*
NO_COLOR=1 KERNTUNE_LOG=kerntune_core=trace,kerntune_cuda=debug,kerntune=debug /usr/bin/time -f "wall %e s" .device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --top 3 > $W/warm-trace-$i.txt 2> $W/warm-trace-$i.err
done
KERNTUNE_CUDA_ISOLATION=0 /usr/bin/time -f "wall %e s" .device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --top 3 --no-db > $W/in-process.txt 2>&1
cd /tmp && tar czf $O/w6.tgz w6
grep -h "^test result\|^exit\|FAILED\|panicked" $W/tests/tests.txt; grep -h "wall\|^---" $W/s/sgemm.txt; grep -h wall $W/*.err $W/in-process.txt; grep -h "devices opened\|context made\|worker initialised\|first\|search done" $W/warm-trace-1.err | cut -c1-160
