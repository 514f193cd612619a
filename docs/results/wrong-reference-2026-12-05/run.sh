#!/usr/bin/env bash
# The fifty-seventh session's GPU call: published kernels whose default config computes wrongly,
# tuned with no CPU reference (the default's outputs are the reference), through CUDA and through
# wgpu on NVIDIA's Vulkan driver:
#  - wd: the triad whose PER_THREAD = 8 (the default) skips its last stripe (exact outputs);
#  - rd: the example reduction whose default (num_blocks = 128) adds 100 to its sum, compared by
#        the sum of its partial sums (the right configs' sums differ in their last digits).
# Each is tuned into a database of its own: the warning should name the reference the likely
# culprit and the tune write no winner (`measurements written, no winner: …`), `db show` say why,
# and a tune with `--reference first-valid` into the same database store a right winner. Then the
# shipped hgemm on both backends, for the pruned configs' examples in words.
# Output: $OUT/wrong.txt (the lines that matter) and $OUT/wrong/NAME.txt (whole outputs).
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export KERNTUNE_CACHE_DIR=/tmp/kt-wrong
BIN=$PWD/.device/kerntune
K=$(dirname $0)
O=$OUT/wrong; mkdir -p $O
W=/tmp/wrong-db; rm -rf $W; mkdir -p $W
one() {
  local name=$1; shift
  local t0=$(date +%s.%N)
  timeout 150 $BIN "$@" > $O/$name.txt 2>&1
  local rc=$?
  echo "== $name: exit $rc, $(python3 -c "import time;print(f'{time.time()-$t0:.1f}')") s: $*"
  grep -E "^winner|^warning|^database|^failures|^ +[0-9]+ ×|e\.g\.|pruned|no winner|^error" $O/$name.txt | cut -c1-700 | head -14
}
{
  for k in wd rd; do
    for b in cuda wgpu; do
      one $k-$b tune $K/$k.toml --backend $b --db $W/$k-$b.db
      one $k-$b-again tune $K/$k.toml --backend $b --db $W/$k-$b.db
      one $k-$b-show db show --db $W/$k-$b.db
      one $k-$b-first-valid tune $K/$k.toml --backend $b --db $W/$k-$b.db --reference first-valid
    done
  done
  one hgemm-cuda tune examples/hgemm/hgemm.toml --backend cuda --budget 30s --no-db
  one hgemm-wgpu tune examples/hgemm/hgemm.toml --backend wgpu --budget 30s --no-db
} 2>&1 | tee $OUT/wrong.txt
