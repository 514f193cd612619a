#!/usr/bin/env bash
# The fifty-ninth session's GPU call: the shipped kernel with planted NaN and infinity
# (examples/faults/nonfinite.toml) through CUDA (outputs compared on the device by the
# comparison kernel, which now counts them) and through wgpu on NVIDIA's Vulkan driver (compared
# on the host); the hgemm at its default size (a winner far below its roof); then every GPU test
# suite (scripts/device-suites.sh), among them `gpu`'s test of the nonfinite example on CUDA.
# Output: $OUT/nonfinite.txt (the lines that matter), $OUT/all.tgz (whole outputs).
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export KERNTUNE_CACHE_DIR=/tmp/kt-nonfinite
BIN=$PWD/.device/kerntune
W=/tmp/nonfinite; rm -rf $W; mkdir -p $W
one() {
  local name=$1; shift
  local t0=$(date +%s.%N)
  timeout 150 $BIN "$@" > $W/$name.txt 2>&1
  local rc=$?
  echo "== $name: exit $rc, $(python3 -c "import time;print(f'{time.time()-$t0:.1f}')") s: $*"
  grep -E "^winner|^failures|^ +[0-9]+ ×|^        |e\.g\.|^error" $W/$name.txt | cut -c1-700 | head -12
}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  one nonfinite-cuda tune examples/faults/nonfinite.toml --backend cuda --no-db
  one nonfinite-wgpu tune examples/faults/nonfinite.toml --backend wgpu --no-db
  one hgemm-cuda tune examples/hgemm/hgemm.toml --backend cuda --budget 30s --no-db
  # The kernel that prints and asserts, four times: its two asserting configs must be one cause
  # each time (call 1's gpu suite made two of them, `1 line` beside more lines read).
  for k in 1 2 3 4; do
    timeout 120 $BIN tune examples/faults/prints.toml --backend cuda --no-db --json > $W/prints-$k.json 2> $W/prints-$k.err
    python3 -c "import json,sys; r=json.load(open(sys.argv[1]))[0]; print('prints', sys.argv[2], [(c['count'], c['kind'], c['message'][:150]) for c in r['causes']])" $W/prints-$k.json $k
  done
  bash scripts/device-suites.sh $W/suites
} 2>&1 | tee $OUT/nonfinite.txt
(cd $W && tar czf $OUT/all.tgz *.txt *.json *.err suites/*.txt 2>/dev/null)
