#!/usr/bin/env bash
# Fourth call, on an H200: two more of Kernel Tuner's examples, as published (zeromeanfilter.cu
# and texture.py's kernel, in .kt/), through the specs beside this script: the zero-mean
# filter's two kernels exhaustively (each filters the image in place), and the texture example.
set -u
. scripts/device-env.sh
W=/tmp/published3; rm -rf $W; mkdir -p $W/spec
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
cp docs/results/published-2026-12-02/zeromean_*.toml docs/results/published-2026-12-02/texture.toml .kt/zeromeanfilter.cu .kt/texture.cu $W/spec/
S=$W/spec
run() { # label args...
  local label=$1; shift
  echo "== $label"
  t0=$(date +%s.%N)
  .device/kerntune tune "$@" > $W/$label.txt 2>&1; rc=$?
  t1=$(date +%s.%N)
  grep -E "^warning|^winner|^space|^compiled|^pruned|^error|^failures|^    [0-9]+ ×|^        |^note: reference|^timing" $W/$label.txt | cut -c1-700
  echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
}
{
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  run zeromean-vertical $S/zeromean_V.toml --backend cuda --db $W/zeromean.sqlite
  run zeromean-horizontal $S/zeromean_H.toml --backend cuda --db $W/zeromean.sqlite
  run texture $S/texture.toml --backend cuda --no-db
  .device/kerntune report --db $W/zeromean.sqlite --kernel computeMeanHorizontally -o $W/zeromean-horizontal.html > $W/report.txt 2>&1; echo "report: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/published3.tgz *.txt *.html spec/*.toml 2>/dev/null
