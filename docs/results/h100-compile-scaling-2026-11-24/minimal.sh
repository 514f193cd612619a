#!/usr/bin/env bash
# NVRTC's -minimal against the default (run on the H100 machine, 2026-11-24): the same configs
# compiled one at a time and 16 at once by the compile_scaling bench program. The spec copies
# differ only in `[kernel] options.cuda`: sgemm_min.toml adds "-minimal" to benches/sgemm/sgemm.toml
# (no options), conv_min.toml has ["-std=c++11", "-minimal"] where examples/convolution has
# ["-std=c++11"]; the kernel sources are copied beside them.
set -u
export CUDA_CACHE_DISABLE=1
for s in sgemm sgemm_min sgemm sgemm_min; do echo "=== $s"; ./compile_scaling $s.toml 48 1 sm_90 serial t16 2>&1 | tail -4; done
for s in conv conv_min; do echo "=== $s"; ./compile_scaling $s.toml 12 1 sm_90 serial t16 2>&1 | tail -4; done
