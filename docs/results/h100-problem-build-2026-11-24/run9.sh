#!/usr/bin/env bash
# The triad reference copying in parallel, and reading x from the problem: problem_build and the triad 2^28 start, before/after interleaved.
set -u
O=$OUT; W=/tmp/w9; rm -rf $W; mkdir -p $W
for i in 1 2; do
  for b in before after; do
    s=$([ $b = before ] && echo -before)
    .device/problem_build$s 268435456 2 > $W/problem-build-$b-$i.txt 2>&1
    mkdir -p $W/$b-$i; OUT=$W/$b-$i KERNTUNE_BIN=$PWD/.device/kerntune$s bash scripts/gpu-check.sh triad-start
  done
done
cd /tmp && tar czf $O/w9.tgz w9
for f in $W/problem-build-*; do echo "$(basename $f): $(tr '\n' ' ' < $f)"; done
for d in $W/*-?/; do echo "== $d"; grep -h "problem data\|worker init\|^wall" $d/triad-start.txt | sed 's/.*DEBUG //' ; done
