#!/usr/bin/env bash
# Second call, on an H200: what compiling in processes costs a tune that needs no timeout. The
# compile-heavy convolution (random, 50 evaluations, seed 1) and SGEMM's 410 configs, cold
# (kerntune's and NVRTC's caches empty, no database), with compiles on threads (the default)
# and in compiler processes (KERNTUNE_COMPILE_ISOLATION=1), alternated, twice each.
set -u
. scripts/device-env.sh
W=/tmp/compilers2; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket)' > $W/cpu.txt
NEW=$PWD/.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
save() { (cd $W && tar czf $OUT/call2.tgz *.txt 2>/dev/null); }
cold() { export KERNTUNE_CACHE_DIR=$(mktemp -d) CUDA_CACHE_PATH=$(mktemp -d); }
line() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))[0]
print({k: r.get(k) for k in ["evaluated", "compiled", "compile_seconds", "compile_threads", "compile_efficiency", "wall_seconds"]},
      "winner", r["winner"]["params"], round(r["winner_stats"]["mean"] * 1e3, 4), "ms")
PY
}
{
  for k in 1 2; do
    for mode in threads processes; do
      iso=0; [ $mode = processes ] && iso=1
      cold
      echo "== convolution random 50 seed 1, cold, $mode ($k)"
      t0=$(date +%s.%N)
      KERNTUNE_COMPILE_ISOLATION=$iso $NEW tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 1 --top 1000 --no-db --json > $W/conv-$mode-$k.txt 2> $W/conv-$mode-$k-err.txt; echo "exit $?, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s"
      line $W/conv-$mode-$k.txt
      save
    done
  done
  for k in 1 2; do
    for mode in threads processes; do
      iso=0; [ $mode = processes ] && iso=1
      cold
      echo "== sgemm 410, cold, $mode ($k)"
      t0=$(date +%s.%N)
      KERNTUNE_COMPILE_ISOLATION=$iso $NEW tune benches/sgemm/sgemm.toml --backend cuda --top 1000 --no-db --json > $W/sgemm-$mode-$k.txt 2> $W/sgemm-$mode-$k-err.txt; echo "exit $?, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s"
      line $W/sgemm-$mode-$k.txt
      save
    done
  done
} > $W/out.txt 2>&1
save
cat $W/out.txt
