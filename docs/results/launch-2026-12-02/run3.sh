#!/usr/bin/env bash
# Third call, on an H200 (CUDA), at the build that stores each run's failure findings: the
# stencil that reads past its buffers everywhere (examples/faults/read_past.toml: every config
# faults, so the tune ends with no winner) and the planted faults, into one database; the HTML
# report of each (the failures' findings listed), `db show`; the GPU suites at this build.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/launch3; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
K=$PWD/.device/kerntune
export KERNTUNE_CACHE_DIR=$W/cache
{
  for s in read_past faults; do
    echo "== $s"
    $K tune examples/faults/$s.toml --db $W/faults.sqlite 2>&1 | tail -4
  done
  $K db show --db $W/faults.sqlite
  $K report --db $W/faults.sqlite --kernel heat --out $W/read_past.html; echo "report exit $?"
  $K report --db $W/faults.sqlite --kernel faults --out $W/faults.html; echo "report exit $?"
  echo "== suites"
  export KERNTUNE_CACHE_DIR=$W/suites
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_BIN=$K KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_BIN=$K KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/launch3.tgz out.txt gpu.txt *.html wgpu-devices.txt
