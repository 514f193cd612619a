#!/usr/bin/env bash
set -u
O=$OUT; W=/tmp/w3; rm -rf $W; mkdir -p $W
mkdir -p $W/kt; OUT=$W/kt bash scripts/gpu-check.sh kt
mkdir -p $W/sgemm; SGEMM_WARM=2 OUT=$W/sgemm bash scripts/gpu-check.sh sgemm
cd /tmp && tar czf $O/w3.tgz w3
grep -h "wall\|^---" $W/sgemm/sgemm.txt; cat $W/kt/kernel-tuner.txt
