#!/usr/bin/env bash
# Fifth call, on an H200, at the session's last build: the example program meeting two sizes
# on one CUDA handle (its tunes in the worker process), an f16 GEMM's roofline line and report
# against the FP16 tensor peak, `report --key` with a problem's sizes comma-separated, a
# budgeted tune run again with a larger budget going on from its stored records, and the GPU
# suites.
set -u
. scripts/device-env.sh
W=/tmp/sizes5; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
export KERNTUNE_CACHE_DIR=$W/cache
{
  echo "== app, two sizes, CUDA"
  KERNTUNE_LOG=kerntune_core::worker=debug .device/kerntune-app --backend cuda --n 4096,16777216 --iters 100 2>&1 | grep -E "triad N=|verified|worker (started|initialised)|another problem|error"
  echo "exit ${PIPESTATUS[0]}"
  echo "== hgemm roofline and report"
  for key in M=256,N=256,K=256 M=4096,N=4096,K=4096; do
    .device/kerntune tune examples/hgemm/hgemm.toml --backend cuda --key $key --db $W/h.sqlite 2>&1 | grep -E "^winner"
  done
  .device/kerntune report examples/hgemm/hgemm.toml --key M=4096,N=4096,K=4096 --db $W/h.sqlite --out $W/hgemm-4096.html && grep -o "[0-9]* % of the FP[0-9]* [a-z ]*peak" $W/hgemm-4096.html | sort | uniq -c | head
  echo "== a budget, then a larger one on the same entry"
  .device/kerntune tune examples/matmul/matmul.toml --backend cuda --key M=2048,N=2048,K=2048 --budget 12 --seed 1 --db $W/m.sqlite 2>&1 | grep -E "^winner|^space|strategy:"
  .device/kerntune tune examples/matmul/matmul.toml --backend cuda --key M=2048,N=2048,K=2048 --budget 30 --seed 2 --force --db $W/m.sqlite 2>&1 | grep -E "^winner|^space|strategy:"
  for t in conformance gpu wgpu-lib open launch; do
    echo "== $t"
    KERNTUNE_BIN=$PWD/.device/kerntune KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test |test result|panicked" | tail -40
  done
  echo "== wgpu-devices"; .device/tests/wgpu-devices --test-threads=1 > $W/wgpu-devices.txt 2>&1; echo "exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/sizes5.tgz out.txt gpu.txt wgpu-devices.txt hgemm-4096.html
