#!/usr/bin/env bash
# On an H200 through Vulkan (wgpu): the example application (`examples/app`, which calls
# `kerntune::hook()`) tuning a triad whose HANG = 1 configs never end
# (examples/app/tests/data/hang.toml), through the wgpu launch API — NEW (this session's build:
# the tune's kernels in a worker process on the application's adapter) and OLD (the build
# before: in the program's process), three runs of NEW, the database it wrote; the same spec
# through the CUDA launch API (hang.cu, in a worker process in both builds), twice; and the GPU
# suites at this build. OLD runs last, under a kill after 60 s (a process whose dispatch never
# ends can wait forever at exit on NVIDIA's driver).
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/launch1; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune-app OLD=$PWD/.device/kerntune-app-old
SPEC=examples/app/tests/data/hang.toml
{
  for r in 1 2 3; do
    echo "== NEW run $r"
    rm -rf $W/cache-new-$r
    KERNTUNE_CACHE_DIR=$W/cache-new-$r KERNTUNE_LOG=info /usr/bin/time -f "process wall %e s" timeout -s KILL 120 $NEW --backend wgpu --spec $SPEC --n 65536 --iters 3
    echo "exit $?"
    .device/kerntune db show --json --db $W/cache-new-$r/db.sqlite > $W/db-new-$r.json; echo "db show exit $?"
  done
  for r in 1 2; do
    echo "== NEW, CUDA launch API, run $r"
    rm -rf $W/cache-cuda-$r
    KERNTUNE_CACHE_DIR=$W/cache-cuda-$r KERNTUNE_LOG=info /usr/bin/time -f "process wall %e s" timeout -s KILL 120 $NEW --backend cuda --spec $SPEC --n 65536 --iters 3
    echo "exit $?"
    .device/kerntune db show --json --db $W/cache-cuda-$r/db.sqlite > $W/db-cuda-$r.json; echo "db show exit $?"
  done
  echo "== NEW, the shipped triad (no hang), as the app test does"
  KERNTUNE_CACHE_DIR=$W/cache-triad timeout -s KILL 120 $NEW --backend wgpu --spec examples/triad/triad.toml --n 65536,1048576 --iters 20; echo "exit $?"
  echo "== suites"
  export KERNTUNE_CACHE_DIR=$W/suites
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_BIN=$PWD/.device/kerntune KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_BIN=$PWD/.device/kerntune KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
  echo "== OLD"
  KERNTUNE_CACHE_DIR=$W/cache-old KERNTUNE_LOG=info /usr/bin/time -f "process wall %e s" timeout -s KILL 60 $OLD --backend wgpu --spec $SPEC --n 65536 --iters 3
  echo "exit $?"
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/launch1.tgz out.txt gpu.txt db-*.json wgpu-devices.txt
