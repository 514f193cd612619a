#!/usr/bin/env bash
# The second call: each damage alone. For each of the four (cut to half, random bytes, another
# config's CUBIN, one byte changed) on a copy of a freshly filled cache: the previous build, and
# this build once with the entries' checksums removed (a cache an older kerntune filled: only the
# backend's reading of each CUBIN can tell). Same build and carry as run.sh; $OUT/each.txt.
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
OLD=/tmp/kerntune-old; xz -dc .pack/kerntune-old.xz > $OLD; chmod +x $OLD
W=/tmp/each; rm -rf $W; mkdir -p $W
one() {
  local name=$1 bin=$2; shift 2
  timeout 150 $bin "$@" > $W/$name.txt 2>&1
  local rc=$?
  echo "== $name: exit $rc"
  grep -E "^winner|^compiled|WARN|×|fail|error|Segmentation" $W/$name.txt | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-300 | head -8
}
{
  KERNTUNE_CACHE_DIR=$W/fresh one fill $BIN tune examples/reduction/reduction.toml --backend cuda --no-db
  for kind in cut random other flip; do
    for who in old new-no-checksums; do
      rm -rf $W/c; cp -a $W/fresh $W/c
      python3 - $W/c/cuda $kind <<'PY'
import os, sys, random
d, kind = sys.argv[1], sys.argv[2]
cubins = sorted(f for f in os.listdir(d) if f.endswith(".cubin"))
a, other = cubins[0], cubins[1]
p = lambda f: os.path.join(d, f)
x = bytearray(open(p(a), "rb").read())
if kind == "cut": x = x[: len(x) // 2]
elif kind == "random": x = bytearray(random.Random(1).randbytes(len(x)))
elif kind == "other": x = bytearray(open(p(other), "rb").read())
else: x[len(x) // 2] ^= 1
open(p(a), "wb").write(bytes(x))
print(f"damaged {a} ({kind})")
PY
      if [ $who = old ]; then b=$OLD; else b=$BIN; rm -f $W/c/cuda/*.sum; fi
      KERNTUNE_CACHE_DIR=$W/c one $kind-$who $b tune examples/reduction/reduction.toml --backend cuda --no-db
    done
  done
} 2>&1 | tee $OUT/each.txt
(cd $W && tar czf $OUT/each.tgz *.txt)
