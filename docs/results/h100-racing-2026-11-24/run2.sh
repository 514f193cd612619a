#!/usr/bin/env bash
# GPU tests with the new racing; Kernel Tuner's SGEMM and kerntune's in one call. Everything tarred.
set -u
O=$OUT; W=/tmp/w2; mkdir -p $W
mkdir -p $W/sgemm-a; OUT=$W/sgemm-a bash scripts/gpu-check.sh sgemm
mkdir -p $W/kt; OUT=$W/kt bash scripts/gpu-check.sh kt
mkdir -p $W/sgemm-b; SGEMM_WARM=2 OUT=$W/sgemm-b bash scripts/gpu-check.sh sgemm
mkdir -p $W/tests; OUT=$W/tests bash scripts/gpu-check.sh tests
cd /tmp && tar czf $O/w2.tgz w2
grep -h "wall\|^---" $W/sgemm-*/sgemm.txt; cat $W/kt/kernel-tuner.txt; grep -h "^test result\|^exit\|FAILED\|wall" $W/tests/tests.txt
