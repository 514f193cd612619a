#!/usr/bin/env bash
set -u
for f in .gl/*.deb; do dpkg -x "$f" / ; done; ldconfig
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* /usr/local/cuda/lib64/libnvrtc.so.* 2>/dev/null | grep -v alt | head -1)
mkdir -p /tmp/kt-lib && ln -sf "$lib" /tmp/kt-lib/libnvrtc.so
export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname "$lib"):${LD_LIBRARY_PATH:-}
export KERNTUNE_CACHE_DIR=/tmp/ktc
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
B=.device/kerntune
mkdir -p $OUT/r; OUT0=$OUT; OUT=$OUT/r
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
$B devices --backend wgpu > $OUT/devices.txt 2>&1 || export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
T() { /usr/bin/time -f "wall %e s" "$@"; }
# Fidelity: measure twice in one tune (CUDA).
T $B tune benches/sgemm/sgemm.toml --backend cuda --no-db --recheck 20 --json > $OUT/sgemm-1.json 2> $OUT/sgemm-1.err
T $B tune benches/sgemm/sgemm.toml --backend cuda --no-db --recheck 20 --json > $OUT/sgemm-2.json 2> $OUT/sgemm-2.err
T $B tune benches/sgemm/sgemm.toml --backend cuda --no-db --recheck 20 > $OUT/sgemm-3.txt 2>&1
T $B tune examples/triad/triad.toml --backend cuda --key N=268435456 --no-db --recheck 20 --json > $OUT/triad-1.json 2> $OUT/triad-1.err
T $B tune examples/triad/triad.toml --backend cuda --key N=268435456 --no-db --recheck 20 > $OUT/triad-2.txt 2>&1
# wgpu: the shipped matmul (unchecked) with recheck, and the attribution of the checks.
K="--key M=2048,N=2048,K=2048 --no-db --backend wgpu"
T $B tune examples/matmul/matmul.toml $K --recheck 20 --json > $OUT/wgpu-matmul.json 2> $OUT/wgpu-matmul.err
T $B tune examples/matmul/matmul.toml $K --top 8 > $OUT/wgpu-matmul.txt 2>&1
T $B tune examples/matmul/matmul.toml --key M=2048,N=2048,K=2048 --no-db --backend cuda --top 8 > $OUT/cuda-matmul.txt 2>&1
for v in checked no-bounds-checks no-loop-bounding unchecked; do
  T $B tune .device/mm/$v.toml $K --strategy random --budget 40 --seed 1 --json > $OUT/rand40-$v.json 2> $OUT/rand40-$v.err
done
cd $OUT0 && tar czf r.tgz r && rm -rf r
