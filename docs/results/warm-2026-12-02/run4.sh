#!/usr/bin/env bash
# Fourth call, on an H200, through Vulkan (wgpu): does the first flight cost an adaptive search
# on wgpu as it did on a warm CUDA cache? The f32 matmul at 2048³, --budget 20, hybrid, eight
# seeds, with 16 compile threads (24 asked before any outcome) and with 2 (3), and its
# exhaustive tune for the optimum; the wall of each.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/warm4; rm -rf $W; mkdir -p $W/wgpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
export KERNTUNE_CACHE_DIR=$W/cache
{
  /usr/bin/time -f "wgpu matmul 2048 exhaustive: process wall %e s" $NEW tune examples/matmul/matmul.toml --backend wgpu --key M=2048,N=2048,K=2048 --no-db --json > $W/wgpu/exh.json
  for s in 1 2 3 4 5 6 7 8; do
    for j in 16 2; do
      /usr/bin/time -f "wgpu matmul 2048 -j $j seed $s: process wall %e s" $NEW tune examples/matmul/matmul.toml --backend wgpu --key M=2048,N=2048,K=2048 --budget 20 --strategy hybrid --seed $s -j $j --no-db --json > $W/wgpu/j$j-$s.json
    done
  done
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/warm4.tgz out.txt gpu.txt wgpu
