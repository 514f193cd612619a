#!/usr/bin/env bash
# Third call, on an H200, at the final build (after the second call: a prune's line names --max
# or the variable, and leaves out "none used in the last …" under two minutes): the macro-expanded
# kernel with --compile-timeout 5s once more (a second sample of which compiles wait inside
# NVRTC), then every GPU suite.
set -u
. scripts/device-env.sh
W=/tmp/hostcode3; rm -rf $W; mkdir -p $W/hand
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
H=$W/hand
save() { (cd $W && tar czf $OUT/hostcode3.tgz *.txt hand/* 2>/dev/null); }
{
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  echo "== rep, --compile-timeout 5s (CPU time)"
  tar xzf docs/results/overread-2026-12-02/call3.tgz -C $W hand/rep.cu hand/rep.toml
  t0=$(date +%s.%N)
  $NEW tune $H/rep.toml --backend cuda --no-db --compile-timeout 5s --top 8 --json > $W/rep-timeout.json 2> $W/rep-timeout.err; rc=$?
  t1=$(date +%s.%N)
  python3 - $W/rep-timeout.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for x in r["results"]:
    print(x.get("config"), x.get("outcome"), (x.get("message") or "")[:230], x.get("compile_seconds"))
PY
  echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
  save
  export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
  for t in gpu conformance wgpu-lib open launch; do
    KERNTUNE_CACHE_DIR=$W/suites KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu timeout 200 .device/tests/$t --test-threads=1 > $W/suite-$t.txt 2>&1; echo "$t: exit $?"
    grep -E "^test result|FAILED|panicked" $W/suite-$t.txt | sed "s/^/$t: /" | cut -c1-1500
    save
  done
  KERNTUNE_CACHE_DIR=$W/suites KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu timeout 100 .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
save
cat $W/out.txt
