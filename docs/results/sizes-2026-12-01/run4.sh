#!/usr/bin/env bash
# Fourth call, on an H200: the example program meeting two sizes on one CUDA handle (its tunes
# in the worker process, kerntune::hook()), each verified; an f16 GEMM's roofline line against
# the FP16 tensor peak, at 256³ (below the FP32 peak's rate) and 4096³; the report of that
# entry.
set -u
. scripts/device-env.sh
W=/tmp/sizes4; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
export KERNTUNE_CACHE_DIR=$W/cache
{
  echo "== app, two sizes, CUDA"
  KERNTUNE_LOG=kerntune_core::worker=debug .device/kerntune-app --backend cuda --n 4096,16777216 --iters 100 2>&1 | grep -E "triad N=|verified|worker (started|initialised)|another problem|error"
  echo "exit ${PIPESTATUS[0]}"
  echo "== hgemm roofline"
  for key in M=256,N=256,K=256 M=4096,N=4096,K=4096; do
    .device/kerntune tune examples/hgemm/hgemm.toml --backend cuda --key $key --db $W/h.sqlite 2>&1 | grep -E "^winner"
  done
  .device/kerntune report examples/hgemm/hgemm.toml --key M=256,N=256,K=256 --db $W/h.sqlite --out $W/hgemm-256.html && grep -o "[0-9]* % of the FP[0-9]* [a-z ]*peak" $W/hgemm-256.html | sort | uniq -c | head
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/sizes4.tgz out.txt gpu.txt hgemm-256.html
