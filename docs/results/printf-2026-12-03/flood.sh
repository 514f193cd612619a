#!/usr/bin/env bash
# H200: does reading the worker's standard output slow a kernel that floods it? The flood case
# (every thread prints) on the same 6 random configs (seed 1), in the worker (NEW: read apart)
# and in the tuner's process (printing to a file), twice each, alternating.
set -u
. scripts/device-env.sh
D=docs/results/printf-2026-12-03
W=/tmp/printf-flood; rm -rf $W; mkdir -p $W
for round in 1 2; do
  for mode in worker inproc; do
    iso=1; [ $mode = inproc ] && iso=0
    t0=$(date +%s.%N)
    KERNTUNE_CUDA_ISOLATION=$iso KERNTUNE_CACHE_DIR=$W/cache timeout 140 .device/kerntune tune $D/flood.toml --backend cuda --no-db --strategy random --budget 6 --seed 1 --top 6 > $W/$mode-$round.out 2> $W/$mode-$round.err
    rc=$?; t1=$(date +%s.%N)
    echo "== $mode $round: exit $rc, $(python3 -c "print(f'{$t1-$t0:.1f}')") s, stdout $(wc -c < $W/$mode-$round.out) bytes"
    grep -aE "^│ [0-9]|^winner|timed out|^note: the kernel" $W/$mode-$round.out | cut -c1-300
    head -c 100000 $W/$mode-$round.out > $W/$mode-$round.txt; cp $W/$mode-$round.err $W/$mode-$round.err.txt
  done
done 2>&1 | tee $W/log.txt
(cd $W && tar czf $OUT/flood.tgz *.txt)
