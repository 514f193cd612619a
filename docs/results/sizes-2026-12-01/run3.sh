#!/usr/bin/env bash
# Third call, on an H200, at the session's last build: the GPU suites (CUDA and Vulkan), and the
# CLI test's spec of three matmul problems (the later ones larger than the first) through CUDA,
# each on its own buffers in the worker process.
set -u
. scripts/device-env.sh
W=/tmp/sizes3; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
export KERNTUNE_CACHE_DIR=$W/cache
{
  rm -rf /tmp/mm && cp -r examples/matmul /tmp/mm
  sed -i 's/^M = 512$/M = 32/; s/^N = 512$/N = 32/; s/^K = 512$/K = 32/' /tmp/mm/matmul.toml
  printf '\n[[problems]]\nM = 960\nN = 640\nK = 800\n\n[[problems]]\nM = 2048\nN = 2048\nK = 2048\n' >> /tmp/mm/matmul.toml
  .device/kerntune tune /tmp/mm/matmul.toml --backend cuda --budget 24 --db $W/mm.sqlite 2>&1 | grep -E "^== problem|^prior:|^winner|strategy:|error|wrong"
  for t in conformance gpu wgpu-lib open launch; do
    echo "== $t"
    KERNTUNE_BIN=$PWD/.device/kerntune KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test |test result|panicked" | tail -40
  done
  echo "== wgpu-devices"; .device/tests/wgpu-devices --test-threads=1 > $W/wgpu-devices.txt 2>&1; echo "exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/sizes3.tgz out.txt gpu.txt wgpu-devices.txt
