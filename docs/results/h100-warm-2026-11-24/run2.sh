#!/usr/bin/env bash
# Call 2. The CPU GEMM reference (reference_gemm_before: ndarray + matrixmultiply, built from
# 6d7049a; reference_gemm: the gemm crate), then warm SGEMM 410: "b" (call 1's new build)
# against "new" (gemm reference, problem written while the worker opens its device, late-bound
# reference), interleaved; then one traced run of each.
set -u
O=$OUT; W=/tmp/w2; rm -rf $W; mkdir -p $W
for i in 1 2; do .device/reference_gemm_before 4096 3; .device/reference_gemm 4096 3; done > $W/reference-gemm.txt 2>&1
.device/reference_gemm_before 8192 2 >> $W/reference-gemm.txt 2>&1; .device/reference_gemm 8192 2 >> $W/reference-gemm.txt 2>&1
mkdir -p $W/s; SGEMM_WARM=0 OUT=$W/s bash scripts/gpu-check.sh sgemm
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1); export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
for i in 1 2 3 4; do
  for m in b new; do
    rm -rf $KERNTUNE_CACHE_DIR/db.sqlite $KERNTUNE_CACHE_DIR/db.sqlite-*
    b=.device/kerntune; [ $m = b ] && b=.device/kerntune-b
    /usr/bin/time -f "wall %e s" $b tune benches/sgemm/sgemm.toml --backend cuda --top 3 > $W/$m-$i.txt 2>&1
  done
done
for m in b new; do
  rm -rf $KERNTUNE_CACHE_DIR/db.sqlite $KERNTUNE_CACHE_DIR/db.sqlite-*
  b=.device/kerntune; [ $m = b ] && b=.device/kerntune-b
  NO_COLOR=1 KERNTUNE_LOG=kerntune_core=trace,kerntune=debug,kerntune::autotuning=info /usr/bin/time -f "wall %e s" $b tune benches/sgemm/sgemm.toml --backend cuda --top 3 > $W/$m-trace.txt 2> $W/$m-trace.log
  $b db export --out $W/$m-db.json 2>/dev/null; gzip $W/$m-db.json $W/$m-trace.log
done
cd /tmp && tar czf $O/w2.tgz w2
