#!/usr/bin/env bash
# The sixty-second session's GPU call: a damaged compile cache through CUDA.
#  - the example reduction (30 configs) tuned once with a fresh compile cache, which fills it;
#  - four of its CUBINs damaged as a disk, a copy or a person may: cut to half, overwritten with
#    random bytes, replaced by another config's CUBIN (the same kernel), one byte changed;
#  - the same tune (--no-db, so every config is compiled or served from the cache) with the
#    previous build (.pack/kerntune-old.xz), then with this one, each on a copy of the damaged
#    cache: what each does with the four entries;
#  - then every GPU test suite (scripts/device-suites.sh).
# Build at the session's HEAD: `cargo build --release --features cuda -p kerntune`, `bash
# scripts/gpu-check.sh --prepare`, `tar cJf .pack/device.tar.xz .device/kerntune .device/tests`;
# the previous build's binary as .pack/kerntune-old.xz; carry .pack and .gl.
# Output: $OUT/cache.txt (the lines that matter), $OUT/all.tgz.
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
OLD=/tmp/kerntune-old; xz -dc .pack/kerntune-old.xz > $OLD; chmod +x $OLD
W=/tmp/cache; rm -rf $W; mkdir -p $W
one() {
  local name=$1 bin=$2; shift 2
  local t0=$(date +%s.%N)
  timeout 150 $bin "$@" > $W/$name.txt 2>&1
  local rc=$?
  echo "== $name: exit $rc, $(python3 -c "import time;print(f'{time.time()-$t0:.1f}')") s: $*"
  grep -E "^winner|^space|^compiled|WARN|×|fail|error|damaged" $W/$name.txt | cut -c1-400 | head -16
}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  export KERNTUNE_CACHE_DIR=$W/fresh
  one fill $BIN tune examples/reduction/reduction.toml --backend cuda --no-db
  ls $W/fresh/cuda | sed 's/.*\.//' | sort | uniq -c
  python3 - $W/fresh/cuda <<'PY'
import os, sys, random
d = sys.argv[1]
cubins = sorted(f for f in os.listdir(d) if f.endswith(".cubin"))
a, b, c, e, other = cubins[:5]
p = lambda f: os.path.join(d, f)
data = open(p(a), "rb").read(); open(p(a), "wb").write(data[: len(data) // 2])
n = os.path.getsize(p(b)); open(p(b), "wb").write(random.Random(1).randbytes(n))
open(p(c), "wb").write(open(p(other), "rb").read())
x = bytearray(open(p(e), "rb").read()); i = len(x) // 2; x[i] ^= 0x01; open(p(e), "wb").write(bytes(x))
for f, how in [(a, "cut to half"), (b, "random bytes"), (c, "another config's CUBIN"), (e, "one byte changed")]:
    print(f"damaged {f}: {how}")
PY
  cp -a $W/fresh $W/for-old; cp -a $W/fresh $W/for-new
  KERNTUNE_CACHE_DIR=$W/for-old one old-build $OLD tune examples/reduction/reduction.toml --backend cuda --no-db
  KERNTUNE_CACHE_DIR=$W/for-new one new-build $BIN tune examples/reduction/reduction.toml --backend cuda --no-db
  KERNTUNE_CACHE_DIR=$W/for-new one new-build-again $BIN tune examples/reduction/reduction.toml --backend cuda --no-db
  ls $W/for-new/cuda | sed 's/.*\.//' | sort | uniq -c
  bash scripts/device-suites.sh $W/suites
} 2>&1 | tee $OUT/cache.txt
(cd $W && tar czf $OUT/all.tgz *.txt suites/*.txt 2>/dev/null)
