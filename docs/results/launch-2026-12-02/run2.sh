#!/usr/bin/env bash
# Second call, on an H200 (CUDA): the planted-fault examples tuned at this session's last build,
# so that each kind of failure says what its configs share (examples/faults/faults.toml: FAULT =
# 1…6 plants a compile error, a fault, a hang, a wrong output, …), with the summaries, the JSON
# and the HTML report of their database; and the GPU suites at this build.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/launch2; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
K=$PWD/.device/kerntune
export KERNTUNE_CACHE_DIR=$W/cache
{
  for s in faults by_design read_past; do
    echo "== $s"
    $K tune examples/faults/$s.toml --db $W/faults.sqlite 2>&1 | tail -25
    $K tune examples/faults/$s.toml --no-db --json > $W/$s.json 2> $W/$s.err; echo "json exit $?"
  done
  for s in faults by_design read_past; do
    kernel=$(grep -m1 '^name' examples/faults/$s.toml | sed 's/.*= *"\(.*\)"/\1/')
    $K report --db $W/faults.sqlite --kernel $kernel --out $W/$s.html; echo "report $s exit $?"
  done
  echo "== suites"
  export KERNTUNE_CACHE_DIR=$W/suites
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_BIN=$K KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_BIN=$K KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/launch2.tgz out.txt gpu.txt *.json *.err *.html wgpu-devices.txt
