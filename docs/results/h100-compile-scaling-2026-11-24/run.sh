#!/usr/bin/env bash
set -u
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* /usr/local/cuda/lib64/libnvrtc.so.* 2>/dev/null | grep -v alt | head -1)
mkdir -p /tmp/kt-lib && ln -sf "$lib" /tmp/kt-lib/libnvrtc.so
export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname "$lib"):${LD_LIBRARY_PATH:-}
export CUDA_CACHE_DISABLE=1
{ nproc; lscpu | grep -i "model name\|thread(s) per core\|socket"; echo "$lib"; } > $OUT/machine.txt
.device/compile_scaling examples/convolution/convolution.toml 32 1 sm_90 serial t4 t8 t16 p4 p8 p16 > $OUT/compile-scaling.txt 2>&1
