#!/usr/bin/env bash
# First call, on an H200: NVRTC in compiler processes (kerntune_core::compiler). The forty-first
# session's macro-expanded kernel with --compile-timeout 5s (compiles in processes, killed when
# given up on), then the same with KERNTUNE_COMPILE_ISOLATION=0 (on threads, as before); a
# compiler killed from outside by SIGSEGV while it compiles (what a crash of NVRTC looks like);
# then every GPU suite.
set -u
. scripts/device-env.sh
W=/tmp/compilers1; rm -rf $W; mkdir -p $W/hand
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
H=$W/hand
save() { (cd $W && tar czf $OUT/call1.tgz *.txt hand/* 2>/dev/null); }
# Each config's outcome, message and compile seconds from a tune's --json (a list of reports).
outcomes() {
  python3 - "$1" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    for x in r["results"]:
        print(x["config"]["params"], x["outcome"], (x.get("message") or "")[:300], x.get("compile_seconds"))
    print("compiled", r.get("compiled"), "compile_seconds", r.get("compile_seconds"))
PY
}
# The compiler processes alive now: pid, CPU seconds.
compilers() {
  for p in /proc/[0-9]*; do
    if tr '\0' '\n' < $p/environ 2>/dev/null | grep -qx 'KERNTUNE_CUDA_COMPILER=1'; then
      echo "${p#/proc/} $(awk '{print ($14 + $15) / 100}' $p/stat 2>/dev/null)"
    fi
  done
}
{
  tar xzf docs/results/overread-2026-12-02/call3.tgz -C $W hand/rep.cu hand/rep.toml
  for mode in processes threads; do
    echo "== rep (L = 2..5, WG = 128, 256), --compile-timeout 5s, compiles in $mode"
    export KERNTUNE_CACHE_DIR=$W/cache-$mode CUDA_CACHE_PATH=$W/nvcache-$mode
    iso=1; [ $mode = threads ] && iso=0
    t0=$(date +%s.%N)
    KERNTUNE_COMPILE_ISOLATION=$iso $NEW tune $H/rep.toml --backend cuda --no-db --compile-timeout 5s --top 8 --json > $W/rep-$mode-json.txt 2> $W/rep-$mode-err.txt; rc=$?
    t1=$(date +%s.%N)
    echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
    outcomes $W/rep-$mode-json.txt
    sleep 1
    echo "compiler processes left 1 s after the tune: [$(compilers | tr '\n' ';')]"
    save
  done
  echo "== a compiler killed by SIGSEGV while it compiles (L = 2, 5; --compile-timeout 10s)"
  sed 's/^L = .*/L = [2, 5]/' $H/rep.toml > $H/rep25.toml
  export KERNTUNE_CACHE_DIR=$W/cache-segv CUDA_CACHE_PATH=$W/nvcache-segv
  $NEW tune $H/rep25.toml --backend cuda --no-db --compile-timeout 10s --top 8 --json > $W/segv-json.txt 2> $W/segv-err.txt &
  tuner=$!
  sleep 4
  compilers | tee $W/segv-compilers.txt
  victim=$(sort -k2 -n -r $W/segv-compilers.txt | head -1 | cut -d' ' -f1)
  echo "kill -SEGV $victim"; kill -SEGV $victim
  wait $tuner; echo "exit $?"
  outcomes $W/segv-json.txt
  grep -E "^(error|warning|note)" $W/segv-err.txt | cut -c1-400
  save
  bash scripts/device-suites.sh $W
} > $W/out.txt 2>&1
save
cat $W/out.txt
