#!/usr/bin/env bash
# Fifth call, on an H200: f16 and bf16 outputs verified on the device. The build of call 4
# (.device/kerntune-call4: those outputs read back and compared on the host, on every core) and
# this one alternating, twice each, the f16 GEMM exhaustive at 4096³ with a warm compile cache;
# an f16 kernel made wrong for some configs (C scaled by 1.003 where BK = 32) to see the device
# comparison catch it and word it; then the GPU suites.
set -u
. scripts/device-env.sh
W=/tmp/hgemm5; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
export KERNTUNE_CACHE_DIR=$W/cache
run() { /usr/bin/time -f "$1 $2 process wall %e s" .device/$1 tune examples/hgemm/$3 --backend cuda --key M=4096,N=4096,K=4096 --no-db --json > $W/$1-$2.json 2> $W/$1-$2.err; tail -1 $W/$1-$2.err; }
{
  run kerntune warmup hgemm.toml
  for i in 1 2; do run kerntune-call4 $i hgemm.toml; run kerntune $i hgemm.toml; done
  run kerntune-call4 bf16 hgemm_bf16.toml; run kerntune bf16 hgemm_bf16.toml
  echo "--- a wrong kernel (C * 1.003 where BK = 32), f16"
  rm -rf /tmp/hg && cp -r examples/hgemm /tmp/hg && sed -i 's/C\[r \* N + c\] = TO_ELEM(Cs\[warp\]\[e\]);/C[r * N + c] = TO_ELEM(Cs[warp][e] * (BK == 32 ? 1.003f : 1.0f));/' /tmp/hg/hgemm.cu && grep -c 1.003f /tmp/hg/hgemm.cu
  .device/kerntune tune /tmp/hg/hgemm.toml --backend cuda --key M=1024,N=1024,K=1024 --no-db --strategy random --budget 12 --seed 2 2>&1 | grep -A3 "failures"
  echo "--- suites"
  for t in conformance gpu launch; do
    echo "== $t"
    KERNTUNE_BIN=$PWD/.device/kerntune KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test |test result|panicked" | tail -40
  done
} > $W/out.txt 2>&1
for f in $W/*.json; do python3 -c "
import json,sys;d=json.load(open(sys.argv[1]))[0];print(sys.argv[1].split('/')[-1], 'wall', round(d['wall_seconds'],2), 'winner', d['winner']['params'], 'failures', d['failures'])" $f; done >> $W/out.txt
cat $W/out.txt
cd $W && tar czf $OUT/hgemm5.tgz out.txt gpu.txt *.json *.err
