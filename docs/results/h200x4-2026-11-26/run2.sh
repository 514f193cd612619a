#!/usr/bin/env bash
# The same four-GPU node (64 cores), the issue-22 headline pairs in one call: SGEMM 410 cold on
# one GPU (and on every GPU), the convolution random 50 (seed 1) cold twice with the default
# compile threads (every core), then Kernel Tuner, cold, on exactly the first convolution run's
# 50 configs and on the SGEMM space (its side-by-side script: the triad, then SGEMM brute force).
set -u
O=$OUT
. scripts/device-env.sh
W=/tmp/x4b; rm -rf $W; mkdir -p $W
K=.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d) CUPY_CACHE_DIR=$(mktemp -d); }
{
  cold; /usr/bin/time -f "wall %e s" $K tune benches/sgemm/sgemm.toml --backend cuda --device 0 --top 3 --no-db --json > $W/s-cold-one.json 2> $W/s-cold-one.log; echo "s-cold-one: exit $? $(grep -h '^wall' $W/s-cold-one.log)"
  cold; /usr/bin/time -f "wall %e s" $K tune benches/sgemm/sgemm.toml --backend cuda --devices all --top 3 --no-db --json > $W/s-cold-all.json 2> $W/s-cold-all.log; echo "s-cold-all: exit $? $(grep -h '^wall' $W/s-cold-all.log)"
  for i in 1 2; do
    cold; /usr/bin/time -f "wall %e s" $K tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 1 --top 1000 --no-db --json > $W/c-$i.json 2> $W/c-$i.log; echo "c-$i: exit $? $(grep -h '^wall' $W/c-$i.log)"
  done
} > $W/summary.txt 2>&1
python3 - $W > $W/table.txt 2>&1 <<'PY'
import json, sys, glob, os
w = sys.argv[1]
for f in sorted(glob.glob(f"{w}/[sc]-*.json")):
    try:
        r = json.load(open(f)); r = r[0] if isinstance(r, list) else r
    except Exception as e:
        print(os.path.basename(f), "unreadable", e); continue
    devs = [(d.get("name"), d.get("measured")) for d in (r.get("devices") or [])]
    cs = sorted(((x["compile_seconds"] or 0) for x in r["results"]), reverse=True)
    print(os.path.basename(f), "wall", round(r["wall_seconds"], 2), "evaluated", r["evaluated"], "compiled", r["compiled"], "threads", r["compile_threads"],
          "compile summed", round(r["compile_seconds"], 1), "eff", r["compile_efficiency"] and round(r["compile_efficiency"], 3), "slowest", round(cs[0], 1),
          "winner", [v for _, v in r["winner"]["params"]], "%.4f ms" % (r["winner_stats"]["mean"] * 1e3), "devices", devs)
PY
cat $W/summary.txt $W/table.txt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
cold; timeout 250 /usr/bin/time -f "wall %e s" python3 examples/convolution/convolution_kt.py --configs $W/c-1.json > $W/kt-conv.txt 2>&1; echo "kt-conv: exit $? $(grep -h '^wall' $W/kt-conv.txt)"; tail -5 $W/kt-conv.txt
cold; (cd .device/bench && OUT=$W PYTHONUNBUFFERED=1 timeout 280 /usr/bin/time -f "wall %e s" python3 kernel_tuner_side.py) > $W/kt-sgemm.txt 2>&1; echo "kt-sgemm: exit $?"; tail -4 $W/kt-sgemm.txt
rm -f $W/kt_*.json.lock
cd /tmp && tar czf $O/x4b.tgz x4b
