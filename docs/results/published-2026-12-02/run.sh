#!/usr/bin/env bash
# On an H200: three kernels of Kernel Tuner's examples (examples/cuda in KernelTuner/kernel_tuner,
# as published; put pnpoly.cu, spmv.cu and expdist.cu in .kt/, with gen_spmv.py's .npy files)
# tuned through the specs beside this script, as a user who moves a Kernel Tuner script would:
# - pnpoly: its __constant__ polygon made by expressions; once with d_slopes left unfilled (as
#   the kernel alone has them), once filled;
# - spmv: as published (it calls __shfl_down, which CUDA 9 deprecated and sm_70 and later lack),
#   then with __shfl_down_sync (its row index still multiplies by threadIdx.x), then with the
#   index fixed; its arrays from .npy files, checked against the expected y;
# - expdist: CUB inside NVRTC, partial costs per thread block (as many as the config's blocks),
#   as published (all of CUB, which NVRTC cannot take), then with CUB's block-level header alone,
#   element by element and then compared by their sum.
set -u
. scripts/device-env.sh
W=/tmp/published; rm -rf $W; mkdir -p $W/spec
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
cp docs/results/published-2026-12-02/*.toml .kt/*.cu .kt/*.npy $W/spec/
S=$W/spec
sed 's/__shfl_down(local_y, s)/__shfl_down_sync(0xffffffff, local_y, s)/' $S/spmv.cu > $S/spmv_sync.cu
sed 's/(blockIdx.x \* block_size_x \* threadIdx.x)/(blockIdx.x * block_size_x + threadIdx.x)/' $S/spmv_sync.cu > $S/spmv_fixed.cu
sed 's/source = { cuda = "spmv.cu" }/source = { cuda = "spmv_sync.cu" }/' $S/spmv.toml > $S/spmv_sync.toml
sed 's/source = { cuda = "spmv.cu" }/source = { cuda = "spmv_fixed.cu" }/' $S/spmv.toml > $S/spmv_fixed.toml
# NVRTC compiles device code only: the block-level header instead of all of CUB.
sed 's|#include <cub/cub.cuh>|#include <cub/block/block_reduce.cuh>|' $S/expdist.cu > $S/expdist_block.cu
sed 's/source = { cuda = "expdist.cu" }/source = { cuda = "expdist_block.cu" }/' $S/expdist.toml > $S/expdist_block.toml
python3 - "$S" <<'PY'
import sys, re
d = sys.argv[1]
s = open(d + '/pnpoly.toml').read()
# d_slopes left as zeros: what the kernel reads when nothing fills it.
s = re.sub(r'(name = "d_slopes".*?)init = "expr"\nexpr = "[^\n]*"\n', r'\1', s, flags=re.S)
open(d + '/pnpoly_noslopes.toml', 'w').write(s)
PY
grep -c . $S/pnpoly_noslopes.toml > /dev/null
run() { # label args...
  local label=$1; shift
  echo "== $label"
  t0=$(date +%s.%N)
  .device/kerntune tune "$@" > $W/$label.txt 2>&1; rc=$?
  t1=$(date +%s.%N)
  grep -E "^warning|^winner|^space|^compiled|^error|^failures|^    [0-9]+ ×|^        |^note: reference|^timing|^prior" $W/$label.txt | cut -c1-600
  echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
}
{
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  run spmv-published $S/spmv.toml --backend cuda --db $W/spmv.sqlite
  run spmv-sync $S/spmv_sync.toml --backend cuda --db $W/spmv.sqlite
  run spmv-fixed $S/spmv_fixed.toml --backend cuda --db $W/spmv.sqlite
  run pnpoly-noslopes $S/pnpoly_noslopes.toml --backend cuda --budget 150 --seed 1 --db $W/pnpoly-noslopes.sqlite
  run pnpoly $S/pnpoly.toml --backend cuda --budget 150 --seed 1 --db $W/pnpoly.sqlite
  run expdist-published $S/expdist.toml --backend cuda --strategy random --budget 32 --seed 1 --db $W/expdist-published.sqlite
  run expdist-elements $S/expdist_block.toml --backend cuda --strategy random --budget 100 --seed 1 --db $W/expdist-elements.sqlite
  run expdist-sum $S/expdist_block.toml --backend cuda --strategy random --budget 100 --seed 1 --compare cost=sum --db $W/expdist.sqlite
  for k in spmv pnpoly expdist; do
    .device/kerntune report --db $W/$k.sqlite -o $W/$k.html > $W/report-$k.txt 2>&1; echo "report $k: exit $?"
  done
  .device/kerntune db show --db $W/spmv.sqlite
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/published.tgz *.txt *.html spec/*.toml 2>/dev/null
