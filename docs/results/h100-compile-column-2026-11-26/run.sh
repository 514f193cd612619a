#!/usr/bin/env bash
# Issue 26, the compile_s column, on the GPU machine: the priors bench (10 GPUs × 20,000
# configs beside 100,000 other entries) before (03369cb) and after, interleaved twice, on its
# CPU; then the GPU test binaries at this code (every real tune writes the new column).
# Binaries built here (.pack), see scripts/device-env.sh.
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
OUT=$W/gpu timeout 330 bash scripts/gpu-check.sh tests > $W/check.log 2>&1; echo "gpu-check tests: exit $?" >> $W/priors.txt
grep -E '^---|test result|FAILED|panicked|^exit|^wall' $W/gpu/tests.txt > $W/tests.txt 2>&1
cd /tmp && tar czf $O/r.tgz r
