#!/usr/bin/env bash
# The second part of the sixty-fifth session's shared-GPU call: a tune measuring beside a GPU
# that is busy. Both compile caches warmed first, so that both tunes measure rather than compile:
# the load is the example matmul through CUDA tuned again and again (`--no-db`, warm: measuring
# bound); the measured tune is the convolution (random 50, seed 1), alone, then beside the load.
# Output: $OUT/load.txt.
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
W=/tmp/load; rm -rf $W; mkdir -p $W
C="examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 1 --no-db --top 50"
M="examples/matmul/matmul.toml --backend cuda --no-db"
{
  export KERNTUNE_CACHE_DIR=$W/cache
  $BIN tune $C > /dev/null 2>&1; $BIN tune $M > $W/m0.txt 2>&1
  grep -E '^winner|wall time' $W/m0.txt | cut -c1-200
  echo "== the convolution alone (warm)"
  $BIN tune $C > $W/alone.txt 2>&1
  grep -E '^winner|shared|wall time|^time' $W/alone.txt | cut -c1-400
  echo "== beside the matmul, tuned in a loop"
  ( while :; do $BIN tune $M > /dev/null 2>&1; done ) & load=$!
  sleep 3
  $BIN tune $C > $W/beside.txt 2>&1
  kill $load; pkill -f "tune examples/matmul" ; wait 2>/dev/null
  grep -E '^winner|shared|wall time|^time' $W/beside.txt | cut -c1-600
  echo "-- every config's time, alone and beside (ms), and the ratio"
  python3 - $W/alone.txt $W/beside.txt <<'PY'
import sys, re, statistics
def times(p):
    t = {}
    for l in open(p):
        if l.startswith('│ ') and '┆' in l:
            f = [x.strip() for x in l.strip('│\n').split('┆')]
            try: t[f[1]] = (float(f[2]), f[3])
            except ValueError: pass
    return t
a, b = times(sys.argv[1]), times(sys.argv[2])
r = sorted(b[k][0] / a[k][0] for k in a if k in b)
print(f"{len(r)} configs in both tables; beside/alone: median {statistics.median(r):.3f}, min {r[0]:.3f}, max {r[-1]:.3f}")
for k in sorted(a, key=lambda k: a[k][0])[:5]:
    if k in b: print(f"  {k}: {a[k][0]:.4f} ± {a[k][1]} alone, {b[k][0]:.4f} ± {b[k][1]} beside")
PY
} > $OUT/load.txt 2>&1
cat $OUT/load.txt
