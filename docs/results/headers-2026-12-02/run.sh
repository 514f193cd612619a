#!/usr/bin/env bash
# On an H200: the GPU test of the user's own headers (NVRTC given them in memory; an edited
# header is a new kernel; a config that failed to compile is not compiled again), then what
# keeping NVRTC's refusals saves a user who tunes Kernel Tuner's ExpDist again: a cold tune
# (element by element, 100 random configs, 5 of which overflow static shared memory), then
# the same configs again compared by their sum (another verification: every stored record
# stale, so every config is compiled or read from the compile cache again) three times — with
# the refusals kept, with them deleted first (what kerntune did before this change), and kept
# again. Put expdist.cu (KernelTuner/kernel_tuner, examples/cuda) in .kt/.
set -u
. scripts/device-env.sh
W=/tmp/headers; rm -rf $W; mkdir -p $W/spec
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
cp docs/results/published-2026-12-02/expdist.toml .kt/expdist.cu $W/spec/
S=$W/spec
sed 's|#include <cub/cub.cuh>|#include <cub/block/block_reduce.cuh>|' $S/expdist.cu > $S/expdist_block.cu
sed 's/source = { cuda = "expdist.cu" }/source = { cuda = "expdist_block.cu" }/' $S/expdist.toml > $S/expdist_block.toml
run() { # label args...
  local label=$1; shift
  echo "== $label"
  t0=$(date +%s.%N)
  .device/kerntune tune "$@" > $W/$label.txt 2>&1; rc=$?
  t1=$(date +%s.%N)
  grep -E "^warning|^winner|^compiled|^error|^failures|^    [0-9]+ ×" $W/$label.txt | cut -c1-400
  echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
}
NEW=$PWD/.device/kerntune
{
  KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda .device/tests/gpu --test-threads=1 the_users_headers 2>&1 | grep -E "^test |^test result|panicked|left|right|^[a-z].*:" | cut -c1-2000
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  A="$S/expdist_block.toml --backend cuda --strategy random --budget 100 --seed 1"
  run cold $A --db $W/cold.sqlite
  echo "kept refusals: $(ls $W/cache/cuda/*.err 2>/dev/null | wc -l)"
  run sum-kept $A --compare cost=sum --db $W/sum-kept.sqlite
  rm -f $W/cache/cuda/*.err
  run sum-deleted $A --compare cost=sum --db $W/sum-deleted.sqlite
  echo "kept refusals: $(ls $W/cache/cuda/*.err 2>/dev/null | wc -l)"
  run sum-kept-again $A --compare cost=sum --db $W/sum-kept-again.sqlite
  for f in $W/cache/cuda/*.err; do head -c 300 $f; echo; break; done
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/headers1.tgz *.txt spec/*.toml
