#!/usr/bin/env bash
# On an H200: the shipped reduction (examples/reduction: a partial sum per block, as many blocks
# as num_blocks) through CUDA and through Vulkan, compared by its sum (NEW) and element by element
# (NEW with --compare partial=elements; OLD, the build before the thirty-sixth session, given the
# spec without its `compare` line, which it does not know); Kernel Tuner's problem size (80 M
# floats); a kernel that drops elements when DROP = 1; the GPU suites at this build.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/partial; rm -rf $W; mkdir -p $W/spec
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
cp examples/reduction/* $W/spec/
grep -v '^compare = ' examples/reduction/reduction.toml > $W/spec/plain.toml
sed 's/^n = 4194304/n = 80000000/' examples/reduction/reduction.toml > $W/spec/large.toml
sed 's/i < n;/i < n - DROP * 1024;/' examples/reduction/reduction.cu > $W/spec/drop.cu
python3 - "$W/spec" <<'PY'
import sys
d = sys.argv[1]
s = open(d + '/reduction.toml').read()
s = s.replace('source = { cuda = "reduction.cu", hip = "reduction.cu", wgsl = "reduction.wgsl" }', 'source = { cuda = "drop.cu" }')
s = s.replace('num_blocks = {', 'DROP = [0, 1]\nnum_blocks = {').replace('default = { block_size_x = 256 }', 'default = { block_size_x = 256, DROP = 0 }')
open(d + '/drop.toml', 'w').write(s)
PY
run() { # label binary args...
  local label=$1 K=$2; shift 2
  echo "== $label"
  t0=$(date +%s.%N)
  $K tune "$@" > $W/$label.txt 2>&1; rc=$?
  t1=$(date +%s.%N)
  grep -E "^warning|^winner|^space|^error|^failures|^    [0-9]+ ×|^        every|^note: reference|^timing" $W/$label.txt | cut -c1-400
  echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
}
NEW=$PWD/.device/kerntune OLD=$PWD/.device/kerntune-old
{
  export KERNTUNE_CACHE_DIR=$W/cache
  run new-cuda-sum $NEW $W/spec/reduction.toml --backend cuda --no-db
  run new-cuda-elements $NEW $W/spec/reduction.toml --backend cuda --no-db --compare partial=elements
  run old-cuda-plain $OLD $W/spec/plain.toml --backend cuda --no-db
  run old-cuda-compare $OLD $W/spec/reduction.toml --backend cuda --no-db
  run new-vulkan-sum $NEW $W/spec/reduction.toml --backend wgpu --no-db
  run new-vulkan-elements $NEW $W/spec/reduction.toml --backend wgpu --no-db --compare partial=elements
  run new-cuda-80M $NEW $W/spec/large.toml --backend cuda --no-db
  run new-cuda-drop $NEW $W/spec/drop.toml --backend cuda --no-db
  echo "== suites"
  export KERNTUNE_CACHE_DIR=$W/suites
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/partial.tgz out.txt gpu.txt new-*.txt old-*.txt wgpu-devices.txt spec
