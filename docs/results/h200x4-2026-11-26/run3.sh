#!/usr/bin/env bash
# The same node: does the default compile pool (one thread per logical CPU) beat fewer threads?
# SGEMM 410 cold on one GPU and the convolution random 100 (seed 1) cold, with -j 16, 32, 48
# and 64, interleaved twice for SGEMM; the host's CPU layout (threads per core, sockets).
set -u
O=$OUT
. scripts/device-env.sh
W=/tmp/x4c; rm -rf $W; mkdir -p $W
lscpu > $W/lscpu.txt
K=.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d); }
{
  for i in 1 2; do
    for j in 16 32 48 64; do
      cold; /usr/bin/time -f "wall %e s" $K tune benches/sgemm/sgemm.toml --backend cuda --device 0 --top 3 --no-db --json -j $j > $W/s-j$j-$i.json 2> $W/s-j$j-$i.log; echo "s-j$j-$i: exit $? $(grep -h '^wall' $W/s-j$j-$i.log)"
    done
  done
  for j in 16 32 48 64; do
    cold; /usr/bin/time -f "wall %e s" $K tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 100 --seed 1 --top 1000 --no-db --json -j $j > $W/c100-j$j.json 2> $W/c100-j$j.log; echo "c100-j$j: exit $? $(grep -h '^wall' $W/c100-j$j.log)"
  done
} > $W/summary.txt 2>&1
python3 - $W > $W/table.txt 2>&1 <<'PY'
import json, sys, glob, os
w = sys.argv[1]
for f in sorted(glob.glob(f"{w}/[sc]*.json")):
    try:
        r = json.load(open(f)); r = r[0] if isinstance(r, list) else r
    except Exception as e:
        print(os.path.basename(f), "unreadable", e); continue
    cs = sorted(((x["compile_seconds"] or 0) for x in r["results"]), reverse=True)
    print(os.path.basename(f), "wall", round(r["wall_seconds"], 2), "compiled", r["compiled"], "threads", r["compile_threads"],
          "compile summed", round(r["compile_seconds"], 1), "eff", r["compile_efficiency"] and round(r["compile_efficiency"], 3), "slowest", round(cs[0], 1),
          "winner", [v for _, v in r["winner"]["params"]], "%.4f ms" % (r["winner_stats"]["mean"] * 1e3))
PY
grep -E "^CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|Model name|L3" $W/lscpu.txt; cat $W/summary.txt $W/table.txt
cd /tmp && tar czf $O/x4c.tgz x4c
