#!/usr/bin/env bash
# Final build: GPU tests; SGEMM cold + 6 warm (+ a trace); CUDA smoke tunes and fault cases; triad start at 2^28.
set -u
O=$OUT; W=/tmp/w3; rm -rf $W; mkdir -p $W
OUT=$W bash scripts/gpu-check.sh tests
SGEMM_WARM=6 OUT=$W bash scripts/gpu-check.sh sgemm
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1); export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
rm -rf $KERNTUNE_CACHE_DIR/db.sqlite $KERNTUNE_CACHE_DIR/db.sqlite-*
NO_COLOR=1 KERNTUNE_LOG=kerntune_core=trace,kerntune=debug,kerntune::autotuning=info /usr/bin/time -f "wall %e s" .device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --top 3 > $W/trace.txt 2> $W/trace.log; gzip $W/trace.log
OUT=$W bash scripts/gpu-check.sh triad-start
OUT=$W bash scripts/gpu-check.sh cuda faults
cd /tmp && tar czf $O/w3.tgz w3
ls $W; grep -E "^wall|^exit|^---" $W/sgemm.txt; grep "^wall" $W/trace.txt; cat $W/triad-start.txt | grep -E "wall|winner|exit|CPU ref|search done"
grep -hE "test result|FAILED|panicked" $W/*test*.txt 2>/dev/null | head -20
