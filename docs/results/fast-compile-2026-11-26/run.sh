#!/usr/bin/env bash
# Does NVRTC's --Ofast-compile (CUDA 12.8+) shorten the convolution's compiles, and what does it
# do to the kernels? The convolution, random 50 (seed 1), cold, -j 16, no prior, with the spec's
# options plus --Ofast-compile=max|mid|min, against the spec as it is (twice).
set -u
O=$OUT
tar xJf .pack/fc.tar.xz
. scripts/device-env.sh
W=/tmp/fc; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt; lscpu | grep -E 'Model name|^CPU\(s\)' > $W/cpu.txt
ls /usr/local/cuda/lib64/libnvrtc* >> $W/gpu.txt 2>&1
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d); }
K=.device/kerntune; D=examples/convolution
for lvl in max mid min; do
  sed "s/^options = { cuda = \[\"-std=c++11\"\] }/options = { cuda = [\"-std=c++11\", \"--Ofast-compile=$lvl\"] }/" $D/convolution.toml > $D/fc-$lvl.toml
  grep -q "Ofast-compile=$lvl" $D/fc-$lvl.toml || echo "sed failed for $lvl"
done
run() { local name=$1 spec=$2; cold; /usr/bin/time -f "wall %e s" $K tune $spec --backend cuda --strategy random --budget 50 --seed 1 --top 1000 --no-db --json -j 16 > $W/$name.json 2> $W/$name.log; echo "$name: exit $? $(grep -h '^wall' $W/$name.log)"; }
{
  run default-1 $D/convolution.toml
  run max $D/fc-max.toml
  run mid $D/fc-mid.toml
  run min $D/fc-min.toml
  run default-2 $D/convolution.toml
} > $W/summary.txt 2>&1
python3 - $W > $W/table.txt 2>&1 <<'PY'
import json, sys, os, statistics as st
w = sys.argv[1]
def load(n):
    try:
        r = json.load(open(f"{w}/{n}.json")); return r[0] if isinstance(r, list) else r
    except Exception as e:
        print(n, "unreadable", e); return None
base = load("default-1")
def key(x): return tuple(v for _, v in x["config"]["params"]) if isinstance(x["config"], dict) else str(x["config"])
def times(r):
    out = {}
    for x in r["results"]:
        s = x.get("stats")
        out[key(x)] = (x.get("compile_seconds"), s["mean"] if s else None)
    return out
bt = times(base) if base else {}
for n in ["default-1", "max", "mid", "min", "default-2"]:
    r = load(n)
    if not r: continue
    t = times(r)
    cr = [t[k][0] / bt[k][0] for k in t if k in bt and t[k][0] and bt[k][0]]
    kr = [t[k][1] / bt[k][1] for k in t if k in bt and t[k][1] and bt[k][1]]
    print(n, "wall", round(r["wall_seconds"], 2), "compile summed", round(r["compile_seconds"], 1), "winner", [v for _, v in r["winner"]["params"]],
          "%.4f ms" % (r["winner_stats"]["mean"] * 1e3), "failures", r.get("failures"),
          "compile ratio median %.3f (%d)" % (st.median(cr), len(cr)) if cr else "", "kernel ratio median %.3f min %.3f max %.3f (%d)" % (st.median(kr), min(kr), max(kr), len(kr)) if kr else "")
PY
cat $W/gpu.txt $W/summary.txt $W/table.txt; head -c 1500 $W/max.log
cd /tmp && tar czf $O/fc.tgz fc
