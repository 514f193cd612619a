#!/usr/bin/env bash
# Copies into and out of the shared problem file with one thread per core (16) instead of 8: the triad 2^28 start, before/after interleaved.
set -u
O=$OUT; W=/tmp/w10; rm -rf $W; mkdir -p $W
for i in 1 2 3; do
  for b in before after; do
    s=$([ $b = before ] && echo -before)
    :
    mkdir -p $W/$b-$i; OUT=$W/$b-$i KERNTUNE_BIN=$PWD/.device/kerntune$s bash scripts/gpu-check.sh triad-start
  done
done
cd /tmp && tar czf $O/w10.tgz w10
for d in $W/*-?/; do echo "== $d"; grep -h "shared file\|worker init\|^wall" $d/triad-start.txt | sed 's/.*DEBUG //' ; done
