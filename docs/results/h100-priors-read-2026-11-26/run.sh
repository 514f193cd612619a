#!/usr/bin/env bash
# Issue 26, on the GPU machine's CPU: the priors bench (10 GPUs × 20,000 configs beside 100,000
# other entries) before (c556f42) and after the faster read, interleaved, then after on one
# thread; then the GPU test binaries at this session's code (every real tune now writes the
# database's two new indexes). Binaries built here (.pack), see scripts/device-env.sh.
set -u
O=$OUT
. scripts/device-env.sh
W=/tmp/r; rm -rf $W; mkdir -p $W
nproc > $W/cpu.txt; lscpu | grep -E 'Model name|^CPU\(s\)' >> $W/cpu.txt
B="--bench --warm-up-time 1 --measurement-time 4"
for i in 1 2; do
  for v in old new; do
    echo "== $v run $i" >> $W/priors.txt
    ( cd /tmp && $OLDPWD/.device/priors-bench$([ $v = old ] && echo -old) $B 2>&1 | grep -E '^priors|time:|built' ) >> $W/priors.txt
  done
done
echo "== new, RAYON_NUM_THREADS=1" >> $W/priors.txt
( cd /tmp && RAYON_NUM_THREADS=1 $OLDPWD/.device/priors-bench $B 2>&1 | grep -E '^priors|time:|built' ) >> $W/priors.txt
OUT=$W/gpu timeout 330 bash scripts/gpu-check.sh tests > $W/check.log 2>&1; echo "gpu-check tests: exit $?" >> $W/priors.txt
grep -E '^---|test result|FAILED|panicked|^exit|^wall' $W/gpu/tests.txt > $W/tests.txt 2>&1
cd /tmp && tar czf $O/r.tgz r
