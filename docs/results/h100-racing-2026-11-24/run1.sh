#!/usr/bin/env bash
# SGEMM 410 cold + 3 warm with the new racing and without, interleaved; Kernel Tuner in the same call.
set -u
O=$OUT
for b in after before; do
  mkdir -p $O/$b-1; OUT=$O/$b-1 KERNTUNE_BIN=$PWD/.device/kerntune$([ $b = before ] && echo -before) bash scripts/gpu-check.sh sgemm
done
mkdir -p $O/kt; OUT=$O/kt bash scripts/gpu-check.sh kt
for b in before after; do
  mkdir -p $O/$b-2; SGEMM_WARM=2 OUT=$O/$b-2 KERNTUNE_BIN=$PWD/.device/kerntune$([ $b = before ] && echo -before) bash scripts/gpu-check.sh sgemm
done
grep -h "wall\|^---" $O/*/sgemm.txt | head -50
