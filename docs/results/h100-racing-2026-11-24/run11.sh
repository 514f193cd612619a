#!/usr/bin/env bash
# The final build: GPU tests, Kernel Tuner's SGEMM cold and kerntune's SGEMM cold + warm in one call.
set -u
O=$OUT; W=/tmp/w11; rm -rf $W; mkdir -p $W
mkdir -p $W/kt; OUT=$W/kt bash scripts/gpu-check.sh kt
mkdir -p $W/sgemm; SGEMM_WARM=3 OUT=$W/sgemm bash scripts/gpu-check.sh sgemm
mkdir -p $W/tests; OUT=$W/tests bash scripts/gpu-check.sh tests
rm -f $W/kt/kt_triad.json
cd /tmp && tar czf $O/w11.tgz w11
grep -h "wall\|^---" $W/sgemm/sgemm.txt | grep -v compiled; grep -h "winner\b" $W/sgemm/sgemm.txt | head -4 | cut -c1-80; cat $W/kt/kernel-tuner.txt; grep -h "^test result\|^exit\|FAILED" $W/tests/tests.txt
