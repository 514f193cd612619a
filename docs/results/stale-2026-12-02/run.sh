#!/usr/bin/env bash
# One call on an H200 (CUDA): the published stencil with an undersized input
# (examples/faults/read_past.toml: every config faults), tuned, then fixed as its comment says
# (len = "(nx + 2*R) * (ny + 2*R)") and tuned again into the same database — by the build
# before this session (OLD: the stored faults are read back) and by this session's (NEW: the
# configs are measured again, a note says why); `db show` after each; the GPU suites.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/stale; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
python3 - <<'PY'
s = open('examples/faults/read_past.toml').read()
old = 'name = "in"\ntype = "f32"\nlen = "nx * ny"'
assert old in s
open('examples/faults/read_past_fixed.toml', 'w').write(s.replace(old, 'name = "in"\ntype = "f32"\nlen = "(nx + 2*R) * (ny + 2*R)"'))
PY
{
  for build in old new; do
    K=$PWD/.device/kerntune; [ $build = old ] && K=$PWD/.device/kerntune-old
    export KERNTUNE_CACHE_DIR=$W/cache-$build
    for s in read_past read_past_fixed; do
      echo "== $build $s"
      t0=$(date +%s.%N)
      $K tune examples/faults/$s.toml --db $W/$build.sqlite > $W/$build-$s.txt 2>&1; rc=$?
      t1=$(date +%s.%N)
      tail -8 $W/$build-$s.txt
      echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
    done
    $K db show --db $W/$build.sqlite
    echo "== $build: the fixed spec again"
    $K tune examples/faults/read_past_fixed.toml --db $W/$build.sqlite 2>&1 | tail -3
  done
  echo "== suites"
  export KERNTUNE_CACHE_DIR=$W/suites
  K=$PWD/.device/kerntune
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_BIN=$K KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_BIN=$K KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/stale.tgz out.txt gpu.txt old-*.txt new-*.txt wgpu-devices.txt
