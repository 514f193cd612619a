#!/usr/bin/env bash
# Second call, on an H200 (CUDA). Call 1 found read_past.toml's documented fix refused (`R`
# unknown in a length). Here: the stencil with an undersized input
# (examples/faults/read_past.toml: every config faults), then fixed and tuned again into the
# same database. OLD (the build before this session) and NEW, with the fix written with the
# halo's value (len = "(nx + 8) * (ny + 8)", which both read); then NEW alone, from a fresh
# database, with the fix as the example now says (max(R)), and that spec once more (a hit).
# `db show` after each; the GPU suites at this build.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/stale2; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
python3 - <<'PY'
s = open('examples/faults/read_past.toml').read()
old = 'name = "in"\ntype = "f32"\nlen = "nx * ny"'
assert old in s
open('examples/faults/read_past_8.toml', 'w').write(s.replace(old, 'name = "in"\ntype = "f32"\nlen = "(nx + 8) * (ny + 8)"'))
open('examples/faults/read_past_max.toml', 'w').write(s.replace(old, 'name = "in"\ntype = "f32"\nlen = "(nx + 2*max(R)) * (ny + 2*max(R))"'))
PY
tune() { # build label spec db
  local K=$PWD/.device/kerntune; [ $1 = old ] && K=$PWD/.device/kerntune-old
  echo "== $1 $2 ($3)"
  t0=$(date +%s.%N)
  $K tune examples/faults/$3.toml --db $W/$4.sqlite > $W/$1-$2.txt 2>&1; rc=$?
  t1=$(date +%s.%N)
  grep -E "^winner|^space|^note: database|^error|^database" $W/$1-$2.txt | cut -c1-400
  echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
  $K db show --db $W/$4.sqlite | tail -1
}
{
  for build in old new; do
    export KERNTUNE_CACHE_DIR=$W/cache-$build
    tune $build 1-faulty read_past $build
    tune $build 2-fixed read_past_8 $build
  done
  export KERNTUNE_CACHE_DIR=$W/cache-max
  tune new 3-faulty read_past max
  tune new 4-fixed-max read_past_max max
  tune new 5-again read_past_max max
  echo "== suites"
  export KERNTUNE_CACHE_DIR=$W/suites
  K=$PWD/.device/kerntune
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_BIN=$K KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_BIN=$K KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/stale2.tgz out.txt gpu.txt old-*.txt new-*.txt wgpu-devices.txt
