#!/usr/bin/env bash
# Third call, on an H200: the GPU suite `gpu` at this build (with the new memcheck test and the
# memory-fault diagnosis now through Backend::memcheck), then Kernel Tuner's ExpDist (CUB's
# block reduction) at the winner of the earlier study, compared by its sum, with --memcheck:
# a published kernel run under compute-sanitizer; then the same config once more (a database
# hit: the stored winner checked). Put expdist.cu (KernelTuner/kernel_tuner, examples/cuda) in .kt/.
set -u
. scripts/device-env.sh
W=/tmp/headers3; rm -rf $W; mkdir -p $W/spec
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
S=$W/spec
cp docs/results/published-2026-12-02/expdist.toml .kt/expdist.cu $S/
sed 's|#include <cub/cub.cuh>|#include <cub/block/block_reduce.cuh>|' $S/expdist.cu > $S/expdist_block.cu
python3 - "$S" <<'PY'
import sys, re
d = sys.argv[1]
s = open(d + '/expdist.toml').read().replace('source = { cuda = "expdist.cu" }', 'source = { cuda = "expdist_block.cu" }')
for k, v in [("block_size_x", 32), ("block_size_y", 1), ("tile_size_x", 4), ("tile_size_y", 4), ("use_shared_mem", 1)]:
    s = re.sub(r'^%s = \[.*\]$' % k, '%s = [%d]' % (k, v), s, flags=re.M)
open(d + '/expdist_winner.toml', 'w').write(s)
PY
{
  export KERNTUNE_CACHE_DIR=$W/suites
  KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda .device/tests/gpu --test-threads=1 2>&1 | grep -E "^test |^test result|panicked" | cut -c1-3000
  export KERNTUNE_CACHE_DIR=$W/cache
  for run in tune again; do
    echo "== expdist winner, --memcheck ($run)"
    t0=$(date +%s.%N)
    $NEW tune $S/expdist_winner.toml --backend cuda --compare cost=sum --memcheck --top 1 > $W/expdist-$run.txt 2>&1; rc=$?
    t1=$(date +%s.%N)
    grep -E "^warning|^winner|^compiled|^database hit|^memcheck|^error|^failures" $W/expdist-$run.txt | cut -c1-700
    echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
  done
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/headers3.tgz *.txt spec/*.toml
