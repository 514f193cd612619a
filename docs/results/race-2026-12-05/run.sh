#!/usr/bin/env bash
# The sixtieth session's second GPU call: the guard-word probe that tells a race between threads
# from a read past a buffer, on NVIDIA's Vulkan driver (it was changed and tested on llvmpipe):
#  - the shipped read past a buffer (examples/faults/read_past.toml, WGSL): still found;
#  - the example reduction without its first workgroupBarrier() (a race), three times, and once
#    with --memcheck: its configs must be wrong outputs, never `out-of-bounds read`;
#  - the same race through CUDA (reduction.cu without its first __syncthreads()), for contrast;
#  - then every GPU test suite (scripts/device-suites.sh).
# Build at the session's HEAD: `cargo build --release --features cuda -p kerntune`, `bash
# scripts/gpu-check.sh --prepare`, `tar cJf .pack/device.tar.xz .device/kerntune .device/tests`;
# carry .pack and .gl. Output: $OUT/race.txt (the lines that matter), $OUT/all.tgz.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export KERNTUNE_CACHE_DIR=/tmp/kt-race
BIN=$PWD/.device/kerntune
W=/tmp/race; rm -rf $W; mkdir -p $W/k
cp examples/reduction/* $W/k/
python3 - $W/k <<'PY'
import sys
d = sys.argv[1]
w = open(f"{d}/reduction.wgsl").read()
assert "workgroupBarrier();\n    for" in w
open(f"{d}/reduction.wgsl", "w").write(w.replace("workgroupBarrier();\n    for", "for", 1))
c = open(f"{d}/reduction.cu").read()
i = c.find("__syncthreads();")
assert i >= 0
open(f"{d}/reduction.cu", "w").write(c[:i] + c[i + len("__syncthreads();"):])
PY
one() {
  local name=$1; shift
  local t0=$(date +%s.%N)
  timeout 150 $BIN "$@" > $W/$name.txt 2>&1
  local rc=$?
  echo "== $name: exit $rc, $(python3 -c "import time;print(f'{time.time()-$t0:.1f}')") s: $*"
  grep -E "^winner|^failures|^ +[0-9]+ ×|^memcheck|^error|differ between two launches" $W/$name.txt | cut -c1-400 | head -10
}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  one read-past-wgpu tune examples/faults/read_past.toml --backend wgpu --no-db
  for k in 1 2 3; do one race-wgpu-$k tune $W/k/reduction.toml --backend wgpu --no-db --budget 30; done
  one race-wgpu-memcheck tune $W/k/reduction.toml --backend wgpu --no-db --budget 30 --memcheck
  one race-cuda tune $W/k/reduction.toml --backend cuda --no-db --budget 30
  bash scripts/device-suites.sh $W/suites
} 2>&1 | tee $OUT/race.txt
(cd $W && tar czf $OUT/all.tgz *.txt suites/*.txt k 2>/dev/null)
