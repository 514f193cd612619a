#!/usr/bin/env bash
# Fifth call, on an H200, at the final build (after the review's mends: a timed-out compile is
# no longer named as the slowest compile): the third call's macro-expanded kernel with
# --compile-timeout 5s again, then every GPU suite.
set -u
. scripts/device-env.sh
W=/tmp/overread5; rm -rf $W; mkdir -p $W/hand
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
H=$W/hand
save() { (cd $W && tar czf $OUT/overread5.tgz *.txt hand/* 2>/dev/null); }
{
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  tar xzf docs/results/overread-2026-12-02/call3.tgz -C $W hand/rep.cu hand/rep.toml
  echo "== rep, --compile-timeout 5s"
  t0=$(date +%s.%N)
  $NEW tune $H/rep.toml --backend cuda --no-db --compile-timeout 5s --top 4 > $W/rep-timeout.txt 2>&1; rc=$?
  t1=$(date +%s.%N)
  grep -vE "^(┌|├|╞|└)" $W/rep-timeout.txt | cut -c1-700
  echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
  save
  export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
  for t in gpu conformance wgpu-lib open launch; do
    KERNTUNE_CACHE_DIR=$W/suites KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu timeout 200 .device/tests/$t --test-threads=1 > $W/suite-$t.txt 2>&1; echo "$t: exit $?"
    grep -E "^test result|FAILED|panicked" $W/suite-$t.txt | sed "s/^/$t: /" | cut -c1-1500
    save
  done
  KERNTUNE_CACHE_DIR=$W/suites KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu timeout 100 .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
save
cat $W/out.txt
