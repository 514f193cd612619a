#!/usr/bin/env bash
# Fourth call, on an H200, at the build that reads back the reference's read-only inputs:
# - Kernel Tuner's zero-mean filter (computeMeanVertically, which filters the image in place)
#   with the image declared `access = "read"` (as a user moving the script might leave it), then
#   as published in docs/results/published-2026-12-02 (`readwrite`);
# - then every GPU suite at this build (the new `an_input_the_kernel_writes_is_named` among them).
set -u
. scripts/device-env.sh
W=/tmp/overread4; rm -rf $W; mkdir -p $W/spec
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
S=$W/spec
save() { (cd $W && tar czf $OUT/overread4.tgz *.txt spec/*.toml 2>/dev/null); }
run() { # label args...
  local label=$1; shift
  echo "== $label"
  t0=$(date +%s.%N)
  $NEW tune "$@" > $W/$label.txt 2>&1; rc=$?
  t1=$(date +%s.%N)
  grep -E "^warning|^winner|^space|^error|^failures|^    [0-9]+ ×|^        |^note: the reference|^timing" $W/$label.txt | cut -c1-700
  echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
}
{
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  cp docs/results/published-2026-12-02/zeromean_V.toml .kt/zeromeanfilter.cu $S/
  python3 - "$S" <<'PY'
import sys
d = sys.argv[1]
s = open(d + '/zeromean_V.toml').read()
s2 = s.replace('init = "random"\naccess = "readwrite"\n', 'init = "random"\n')
assert s2 != s
open(d + '/zeromean_V_read.toml', 'w').write(s2)
PY
  run zeromean-read $S/zeromean_V_read.toml --backend cuda --no-db
  run zeromean-readwrite $S/zeromean_V.toml --backend cuda --no-db
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
