#!/usr/bin/env bash
# Issue 22: what slows concurrent NVRTC compiles? The same 16 convolution configs (seed 1)
# compiled for sm_90 one at a time and by pools of 8 and 16 threads (backend-cuda/examples/
# compile_scaling.rs), and 8 threads beside 8 processes that load the other cores without
# compiling: pure ALU loops (the chip's power and clock shared, nothing else) or streaming
# copies (its last-level cache and memory bandwidth shared). Then 16 threads with jemalloc
# preloaded (allocator contention). The mean CPU clock is sampled every 0.5 s during each run.
# Also the GPU tests at this session's code through gpu-check.sh, which now sources
# scripts/device-env.sh (this script does too).
set -u
O=$OUT
. scripts/device-env.sh
W=/tmp/cc; rm -rf $W; mkdir -p $W
{ nproc; lscpu; which perf; ls /sys/devices/system/cpu/cpu0/cpufreq 2>&1; } > $W/machine.txt 2>&1
nvidia-smi -L > $W/gpus.txt
OUT=$W/check timeout 300 bash scripts/gpu-check.sh tests > $W/check.log 2>&1; echo "gpu-check tests: exit $?" > $W/summary.txt
grep -E '^---|test result|FAILED|panicked|^exit' $W/check/tests.txt >> $W/summary.txt
export CUDA_CACHE_DISABLE=1
JM=$PWD/.pack/libjemalloc.so.2
S=.device/compile_scaling; C="examples/convolution/convolution.toml 16 1 sm_90"
clock() { while :; do echo "$(date +%s.%N) $(awk '/cpu MHz/{s+=$4;n++} END{printf "%.0f", s/n}' /proc/cpuinfo)"; sleep 0.5; done; }
hogs=()
spin() { for i in $(seq $1); do timeout 300 sh -c 'while :; do :; done' & hogs+=($!); done; }
mem() { for i in $(seq $1); do timeout 300 python3 -c 'import numpy as np
a = np.ones(2**26); b = np.empty_like(a)
while True: np.copyto(b, a)' & hogs+=($!); done; }
stop() { for p in "${hogs[@]}"; do kill $p 2>/dev/null; done; hogs=(); wait 2>/dev/null; }
run() { local name=$1; shift; clock > $W/clock-$name.txt & local c=$!; "$@" > $W/$name.txt 2>&1; echo "$name: exit $? $(grep -h 'wall' $W/$name.txt | tail -1)" >> $W/summary.txt; kill $c; }
run serial $S $C serial
run t8 $S $C t8
spin 8; sleep 1; run t8-spin8 $S $C t8; stop
mem 8; sleep 3; run t8-mem8 $S $C t8; stop
run t16 $S $C t16
run t16-jemalloc env LD_PRELOAD=$JM $S $C t16
run t8-again $S $C t8
run t16-again $S $C t16
run serial-jemalloc env LD_PRELOAD=$JM $S $C serial
cd /tmp && tar czf $O/cc.tgz cc
