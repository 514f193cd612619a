#!/usr/bin/env bash
# Fourth call, on an H200, at the final build (after the three calls: a compiler whose answer
# cannot be read is waited for, then killed; KERNTUNE_COMPILE_ISOLATION's spellings; HIP's
# compile refactored): the rep tune with --compile-timeout 5s in compiler processes once more,
# then every GPU suite.
set -u
. scripts/device-env.sh
W=/tmp/compilers4; rm -rf $W; mkdir -p $W/hand
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
save() { (cd $W && tar czf $OUT/call4.tgz *.txt hand/* 2>/dev/null); }
{
  tar xzf docs/results/overread-2026-12-02/call3.tgz -C $W hand/rep.cu hand/rep.toml
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  echo "== rep (L = 2..5, WG = 128, 256), --compile-timeout 5s"
  t0=$(date +%s.%N)
  $NEW tune $W/hand/rep.toml --backend cuda --no-db --compile-timeout 5s --json > $W/rep-json.txt 2> $W/rep-err.txt; rc=$?
  echo "exit $rc, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s"
  python3 - $W/rep-json.txt <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    for x in r["results"]:
        print(x["config"]["params"], x["outcome"], (x.get("message") or "")[:200], x.get("compile_seconds"))
PY
  save
  bash scripts/device-suites.sh $W
} > $W/out.txt 2>&1
save
cat $W/out.txt
