#!/usr/bin/env bash
# The fiftieth session's H200 call: where a tune's time went (the `time:` line, `--json`'s
# `time`, the report's lanes). Each tune writes its own database and report: SGEMM's 410 configs
# cold with 16 and with 4 compile threads, then again on the warm compile cache (16); the
# compile-heavy convolution (random 50, seed 1) cold; the triad; the example matmul through
# Vulkan (wgpu, random 40, seed 1). Then every GPU suite. TAG names the archive (call1: the first
# build, call2: the final one; from call2 on the databases are kept too, to draw them here).
set -u
. scripts/device-env.sh
W=/tmp/timeline; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
K=$PWD/.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
TAG=${TAG:-call1}
save() { (cd $W && tar czf $OUT/$TAG.tgz *.txt *.html *.json *.sqlite 2>/dev/null); }
secs() { python3 -c "print(f'{$2-$1:.2f}')"; }
tune() { # NAME SPEC ARGS...
  local name=$1 spec=$2; shift 2
  local t0=$(date +%s.%N)
  timeout 240 $K tune $spec --db $W/$name.sqlite --top 3 "$@" > $W/$name.txt 2>&1; local rc=$?
  local t1=$(date +%s.%N)
  echo "== $name: kerntune tune $spec $*"
  grep -vE "^(┌|├|╞|└|│)" $W/$name.txt | grep -vE "^(note: racing|note: clock)" | cut -c1-1200
  echo "exit $rc, $(secs $t0 $t1) s"
  $K report $spec --db $W/$name.sqlite -o $W/$name.html 2>&1 | tail -1
  save
}
{
  export KERNTUNE_CACHE_DIR=$W/cache-sgemm CUDA_CACHE_PATH=$W/cuda-cache-sgemm
  tune sgemm-cold-j16 benches/sgemm/sgemm.toml --backend cuda -j 16
  tune sgemm-warm-j16 benches/sgemm/sgemm.toml --backend cuda -j 16
  export KERNTUNE_CACHE_DIR=$W/cache-sgemm4 CUDA_CACHE_PATH=$W/cuda-cache-sgemm4
  tune sgemm-cold-j4 benches/sgemm/sgemm.toml --backend cuda -j 4
  export KERNTUNE_CACHE_DIR=$W/cache-conv CUDA_CACHE_PATH=$W/cuda-cache-conv
  tune conv-cold examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 1
  export KERNTUNE_CACHE_DIR=$W/cache-triad
  tune triad examples/triad/triad.toml --backend cuda
  export KERNTUNE_CACHE_DIR=$W/cache-wgpu
  VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json tune matmul-wgpu examples/matmul/matmul.toml --backend wgpu --strategy random --budget 40 --seed 1
  # The same account through --json.
  export KERNTUNE_CACHE_DIR=$W/cache-json
  $K tune examples/triad/triad.toml --backend cuda --no-db --json > $W/triad.json 2> $W/triad-json-err.txt
  python3 -c "import json; r=json.load(open('$W/triad.json'))[0]; print('json time:', json.dumps(r['time'])); print('json spans of one result:', json.dumps(r['results'][0].get('spans')))"
  save
  bash scripts/device-suites.sh $W
} 2>&1 | tee $W/log.txt
save
