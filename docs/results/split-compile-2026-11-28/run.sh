#!/usr/bin/env bash
# NVRTC's split compilation and its per-phase times on the convolution (issue 22), run on the
# GPU machine through the device tool: the same 8 configs (seed 1) compiled one at a time by
# the compile_scaling bench program with each spec copy (they differ only in options.cuda).
set -u
cd "$(dirname "$0")"
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* /usr/local/cuda/lib64/libnvrtc.so.* 2>/dev/null | grep -v alt | head -1)
mkdir -p /tmp/kt-lib && ln -sf "$lib" /tmp/kt-lib/libnvrtc.so
export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname "$lib"):${LD_LIBRARY_PATH:-}
export CUDA_CACHE_DISABLE=1
O=${OUT:-/tmp/split-out}; mkdir -p $O
{ nproc; lscpu | grep -i "model name\|thread(s) per core"; echo "$lib"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $O/machine.txt
for v in time base split0 splitx base split0 splitx; do
  echo "=== $v"; ./compile_scaling conv_$v.toml 8 1 sm_90 serial 2>&1 | tail -3
done > $O/split.txt 2>&1
cp phases.csv $O/ 2>/dev/null
for v in base split0 splitx; do echo "=== $v t16"; ./compile_scaling conv_$v.toml 32 1 sm_90 t16 2>&1 | tail -3; done >> $O/split.txt 2>&1
