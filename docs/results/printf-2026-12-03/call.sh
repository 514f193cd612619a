#!/usr/bin/env bash
# The final H200 call of the forty-ninth session: OLD (.device/kerntune-old, the forty-eighth
# session's build) against NEW (this session's). (1) run.sh's cases with NEW; (2) the shipped
# examples/faults/prints.toml (a debug printf and an assertion, through <assert.h>) with both;
# (3) what reading the worker's standard output costs a tune that prints nothing: the triad and
# the matmul's random 40 (seed 1) through CUDA, interleaved, three rounds; (4) every GPU suite.
set -u
. scripts/device-env.sh
D=docs/results/printf-2026-12-03
W=/tmp/printf-call; rm -rf $W; mkdir -p $W
TAG=final CASES="printing assert assert_h print_fault" bash $D/run.sh > /dev/null 2>&1; cp $OUT/final.tgz $W/ 2>/dev/null
secs() { python3 -c "print(f'{$2-$1:.2f}')"; }
tune() { # NAME BINARY ARGS...
  local name=$1 bin=$2; shift 2
  local t0=$(date +%s.%N)
  timeout 240 $bin tune "$@" > $W/$name.txt 2>&1; local rc=$?
  local t1=$(date +%s.%N)
  echo "== $name: $(basename $bin) tune $*"
  grep -vE "^(┌|├|╞|└|│)" $W/$name.txt | grep -vE "^(note: racing|note: clock)" | cut -c1-900
  echo "exit $rc, $(secs $t0 $t1) s"
}
{
  for b in old new; do
    bin=$PWD/.device/kerntune; [ $b = old ] && bin=$PWD/.device/kerntune-old
    export KERNTUNE_CACHE_DIR=$W/cache-$b
    tune $b-prints $bin examples/faults/prints.toml --backend cuda --no-db
  done
  for round in 1 2 3; do
    for b in old new; do
      bin=$PWD/.device/kerntune; [ $b = old ] && bin=$PWD/.device/kerntune-old
      export KERNTUNE_CACHE_DIR=$W/cache-$b
      tune $b-$round-triad $bin examples/triad/triad.toml --backend cuda --no-db --top 3
      tune $b-$round-matmul $bin examples/matmul/matmul.toml --backend cuda --no-db --strategy random --budget 40 --seed 1 --top 3
    done
  done
  (cd $W && tar czf $OUT/call.tgz *.txt final.tgz 2>/dev/null)
  bash scripts/device-suites.sh $W
} 2>&1 | tee $W/log.txt
(cd $W && tar czf $OUT/call.tgz *.txt final.tgz 2>/dev/null)
