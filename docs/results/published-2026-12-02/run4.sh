#!/usr/bin/env bash
# Fifth call, on an H200: pnpoly (d_slopes filled) as in run.sh, then the same tune allowing 10
# of its 20 M bitmap elements to differ (--mismatches bitmap=10: points on the polygon's edge,
# which the edge tests of between_method 2 and 3 and the precomputed slopes count differently);
# then the GPU suites at this build.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/published5; rm -rf $W; mkdir -p $W/spec
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
cp docs/results/published-2026-12-02/pnpoly.toml .kt/pnpoly.cu $W/spec/
run() { # label args...
  local label=$1; shift
  echo "== $label"
  t0=$(date +%s.%N)
  .device/kerntune tune "$@" > $W/$label.txt 2>&1; rc=$?
  t1=$(date +%s.%N)
  grep -E "^warning|^winner|^space|^error|^failures|^    [0-9]+ ×|^        |^timing" $W/$label.txt | cut -c1-600
  echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
}
NEW=$PWD/.device/kerntune
{
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  run pnpoly $W/spec/pnpoly.toml --backend cuda --budget 150 --seed 1 --no-db
  run pnpoly-mismatches $W/spec/pnpoly.toml --backend cuda --budget 150 --seed 1 --no-db --mismatches bitmap=10
  export KERNTUNE_CACHE_DIR=$W/suites
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/published5.tgz *.txt spec/*.toml
