#!/usr/bin/env bash
# The fifty-sixth session's H200 call for what the fifty-fifth changed on the portable path and
# in pruning, never run on a GPU before: kernels with one fault each (kernels/, the WGSL twins of
# the shipped triad from that session's note), tuned through wgpu on the H200's Vulkan driver,
# and the shipped examples whose shared memory is now counted from the compiler's report (wgpu:
# naga's layout of var<workgroup>; CUDA: the static __shared__ once, not twice).
#  - nob:  the triad without its bounds check: every config should fail on the guard word after y;
#  - shm:  a tile of TILE floats in workgroup memory: configs beyond the adapter's limit pruned
#          after compiling (`shared_memory`), the rest measured;
#  - wd:   a wrong default (PER_THREAD = 8 skips the last stripe) as the reference: the warning
#          names the reference the likely culprit; `--reference first-valid` picks a right winner;
#  - bad:  a constant that is no WGSL: those configs fail with naga's line, the rest tune;
#  - matmul (wgpu), hgemm (wgpu and cuda), matmul (cuda): no config that fits pruned after
#    compiling.
# Output: $OUT/faults.txt (the lines that matter) and $OUT/faults/NAME.txt (whole outputs).
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export KERNTUNE_CACHE_DIR=/tmp/kt-faults
BIN=$PWD/.device/kerntune
K=$(dirname $0)/kernels
D=$OUT/faults; mkdir -p $D
one() {
  local name=$1; shift
  local t0=$(date +%s.%N)
  timeout 150 $BIN tune "$@" --no-db > $D/$name.txt 2>&1
  local rc=$?
  echo "== $name: exit $rc, $(python3 -c "import time;print(f'{time.time()-$t0:.1f}')") s: $*"
  grep -E "^winner|pruned|^error|failed|disagree|reference|out-of-bounds|shared_memory|^warning|adapter|^device|^backend" $D/$name.txt | cut -c1-600 | head -25
}
{
  $BIN devices > $D/devices.txt 2>&1; head -20 $D/devices.txt
  one nob $K/nob.toml --backend wgpu
  one shm $K/shm.toml --backend wgpu
  one wd $K/wd.toml --backend wgpu
  one wd-first-valid $K/wd.toml --backend wgpu --reference first-valid
  one bad $K/bad.toml --backend wgpu
  one matmul-wgpu examples/matmul/matmul.toml --backend wgpu --budget 60s
  one hgemm-wgpu examples/hgemm/hgemm.toml --backend wgpu --budget 60s
  one hgemm-cuda examples/hgemm/hgemm.toml --backend cuda --budget 60s
  one matmul-cuda examples/matmul/matmul.toml --backend cuda --budget 60s
} 2>&1 | tee $OUT/faults.txt
