#!/usr/bin/env bash
# Issue 22's convolution ratio again on the host of run.sh (same lease, warm machine: its
# concurrent compiles slowed by 1.06x at 16 threads, against 1.52x on 2026-11-24's host):
# kerntune random 50, cold, twice, then Kernel Tuner on exactly the first run's configs, cold.
set -u
O=$OUT
. scripts/device-env.sh
W=/tmp/conv; rm -rf $W; mkdir -p $W
nvidia-smi -L > $W/gpus.txt; nproc > $W/nproc.txt
CONV_RUNS="random:50 random:50" KT_SAME="random:50" OUT=$W timeout 560 bash scripts/gpu-check.sh conv > $W/check.log 2>&1; echo "gpu-check: exit $?"
grep -E '^---|^wall|^exit|evaluated' $W/conv.txt | cut -c1-400
grep -E '^---|^wall|^exit|best|total' $W/conv-kt.txt | cut -c1-300
cat $W/conv-cpu.txt
cd /tmp && tar czf $O/conv.tgz conv
