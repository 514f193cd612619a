#!/usr/bin/env bash
set -u
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* /usr/local/cuda/lib64/libnvrtc.so.* 2>/dev/null | grep -v alt | head -1)
mkdir -p /tmp/kt-lib && ln -sf "$lib" /tmp/kt-lib/libnvrtc.so
export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname "$lib"):${LD_LIBRARY_PATH:-}
export KERNTUNE_CACHE_DIR=/tmp/ktc
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
B=.device/kerntune
$B tune benches/sgemm/sgemm.toml --backend cuda --no-db > $OUT/cold.txt 2>&1
for i in 1 2; do
  KERNTUNE_LOG=kerntune=debug,kerntune_core=debug,kerntune_cuda=debug /usr/bin/time -f "wall %e s" $B tune benches/sgemm/sgemm.toml --backend cuda --no-db --json > $OUT/warm-$i.json 2> $OUT/warm-$i.log
done
KERNTUNE_CUDA_ISOLATION=0 KERNTUNE_LOG=kerntune=debug,kerntune_core=debug,kerntune_cuda=debug /usr/bin/time -f "wall %e s" $B tune benches/sgemm/sgemm.toml --backend cuda --no-db --json > $OUT/warm-inproc.json 2> $OUT/warm-inproc.log
