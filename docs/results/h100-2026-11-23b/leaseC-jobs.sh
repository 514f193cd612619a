#!/bin/bash
# Compile concurrency vs per-compile slowdown: random 50 (seed 1) of the convolution with
# 16, 8 and again 16 compile threads, fresh kerntune and NVRTC caches each time.
bash scripts/gpu-check.sh none >/dev/null 2>&1
export KERNTUNE_CACHE_DIR=/tmp/kc
for j in 16 8 16; do
  rm -rf /tmp/kc; export CUDA_CACHE_PATH=$(mktemp -d)
  s=$(python3 -c "import time;print(time.time())")
  .device/kerntune tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 1 --no-db --json -j $j > $OUT/j$j-$(date +%s).json 2>/dev/null
  e=$(python3 -c "import time;print(time.time())")
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[0]; print("j", sys.argv[2], "wall %.2f" % float(sys.argv[3]), "compile_s %.1f" % r["compile_seconds"], "eff %.2f" % r["compile_efficiency"], "longest %.1f" % max(x["compile_seconds"] or 0 for x in r["results"]))' $(ls -t $OUT/j$j-*.json | head -1) $j $(python3 -c "print($e-$s)")
done
