#!/usr/bin/env bash
# Issue 22's convolution with a compile-time prior: kerntune random 50 (seed 1), cold, without
# a prior; Kernel Tuner on exactly those configs, cold, keeping its cache (each config's
# compile_time); then kerntune again with that cache as --prior (its compile times order the
# first compiles longest first) and without, alternating, three times each. All on one host.
set -u
O=$OUT
. scripts/device-env.sh
W=/tmp/cp; rm -rf $W; mkdir -p $W
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
nvidia-smi -L > $W/gpus.txt; lscpu | grep -E 'Model name|^CPU\(s\)' > $W/cpu.txt
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d) CUPY_CACHE_DIR=$(mktemp -d); }
K=.device/kerntune; S=examples/convolution/convolution.toml
run() { local name=$1; shift; cold; /usr/bin/time -f "wall %e s" $K tune $S --backend cuda --strategy random --budget 50 --seed 1 --top 1000 --no-db --json "$@" > $W/$name.json 2> $W/$name.log; echo "$name: exit $? $(grep -h '^wall' $W/$name.log)"; }
{
run none-1
cold; /usr/bin/time -f "wall %e s" python3 examples/convolution/convolution_kt.py --configs $W/none-1.json --cache $W/kt_conv.json > $W/kt.txt 2>&1; echo "kt: exit $? $(grep -h '^wall' $W/kt.txt)"
run prior-1 --prior $W/kt_conv.json
run none-2
run prior-2 --prior $W/kt_conv.json
run none-3
run prior-3 --prior $W/kt_conv.json
} > $W/summary.txt 2>&1
python3 - $W > $W/table.txt 2>&1 <<'PY'
import json, sys, glob, os
w = sys.argv[1]
for f in sorted(glob.glob(f"{w}/*-[0-9].json")):
    try:
        r = json.load(open(f)); r = r[0] if isinstance(r, list) else r
    except Exception as e:
        print(os.path.basename(f), "unreadable", e); continue
    last = max((x["elapsed_s"] or 0) for x in r["results"])
    print(os.path.basename(f), "wall", round(r["wall_seconds"], 2), "compile", round(r["compile_seconds"], 1), "eff", round(r["compile_efficiency"], 3),
          "winner", [v for _, v in r["winner"]["params"]], "%.4f ms" % (r["winner_stats"]["mean"] * 1e3), "last result", round(last, 2),
          "prior", (r.get("prior") or {}).get("line"), [n for n in r.get("notes", []) if n.startswith("compile order")])
PY
cat $W/summary.txt $W/table.txt
cd /tmp && tar czf $O/cp.tgz cp
