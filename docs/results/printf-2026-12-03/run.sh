#!/usr/bin/env bash
# H200 call: CUDA kernels that print (device printf) or assert, tuned as a user would: in the
# default worker process, with --json (stdout must stay JSON), and in the tuner's process
# (KERNTUNE_CUDA_ISOLATION=0). BIN picks the build (default .device/kerntune).
set -u
. scripts/device-env.sh
D=docs/results/printf-2026-12-03
BIN=${BIN:-$PWD/.device/kerntune}
TAG=${TAG:-run}
W=/tmp/printf-$TAG; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
save() { (cd $W && tar czf $OUT/$TAG.tgz *.txt); }
secs() { python3 -c "print(f'{$2-$1:.2f}')"; }
one() { # NAME ARGS...: stdout and stderr kept apart; their sizes, heads and tails, exit, wall
  local name=$1; shift
  local t0=$(date +%s.%N)
  timeout 240 "$@" > $W/$name.out 2> $W/$name.err; local rc=$?
  local t1=$(date +%s.%N)
  echo "== $name: $*"
  echo "exit $rc, $(secs $t0 $t1) s; stdout $(wc -l < $W/$name.out) lines $(wc -c < $W/$name.out) bytes; stderr $(wc -l < $W/$name.err) lines $(wc -c < $W/$name.err) bytes"
  echo "-- stdout head"; head -c 3000 $W/$name.out | head -40 | cut -c1-400
  echo "-- stdout tail"; tail -15 $W/$name.out | cut -c1-400
  echo "-- stderr head"; head -25 $W/$name.err | cut -c1-400
  echo "-- stderr tail"; tail -15 $W/$name.err | cut -c1-400
  head -c 200000 $W/$name.out > $W/$name.out.txt; head -c 200000 $W/$name.err > $W/$name.err.txt
  case "$*" in *--json*) python3 -c "import json,sys; json.load(open('$W/$name.out')); print('stdout parses as JSON')" 2>&1 | tail -1;; esac
}
{
  export KERNTUNE_CACHE_DIR=$W/cache
  for s in ${CASES:-printing flood assert assert_h print_fault}; do
    one $s $BIN tune $D/$s.toml --no-db --backend cuda
    save
  done
  one printing-json $BIN tune $D/printing.toml --no-db --backend cuda --json
  one assert-json $BIN tune $D/assert.toml --no-db --backend cuda --json
  KERNTUNE_CUDA_ISOLATION=0 one printing-inproc $BIN tune $D/printing.toml --no-db --backend cuda
  KERNTUNE_CUDA_ISOLATION=0 one printing-inproc-json $BIN tune $D/printing.toml --no-db --backend cuda --json
  KERNTUNE_CUDA_ISOLATION=0 one assert-inproc $BIN tune $D/assert.toml --no-db --backend cuda
  one triad $BIN tune examples/triad/triad.toml --no-db --backend cuda --top 3
  one assert-memcheck $BIN tune $D/assert.toml --no-db --backend cuda --memcheck --top 3
} 2>&1 | tee $W/log.txt
save
