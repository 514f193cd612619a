#!/usr/bin/env bash
# Issue 22 on an H200 host (16 cores), this session's build: the convolution, random 50 (seed 1,
# no prior), cold (fresh kerntune and NVRTC caches), alternating -j 16 and -j 15 (does leaving a
# core to the measuring worker and the tuner help?), three each; then the GPU test suites with
# what time the call has left.
set -u
O=$OUT; T0=$(date +%s)
. scripts/device-env.sh
W=/tmp/convj; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt; lscpu | grep -E 'Model name|^CPU\(s\)|Thread' > $W/cpu.txt
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d); }
K=.device/kerntune; S=examples/convolution/convolution.toml
run() { local name=$1; shift; cold; /usr/bin/time -f "wall %e s" $K tune $S --backend cuda --strategy random --budget 50 --seed 1 --top 1000 --no-db --json "$@" > $W/$name.json 2> $W/$name.log; echo "$name: exit $? $(grep -h '^wall' $W/$name.log)"; }
{
  for i in 1 2 3; do run j16-$i -j 16; run j15-$i -j 15; done
} > $W/summary.txt 2>&1
python3 - $W > $W/table.txt 2>&1 <<'PY'
import json, sys, glob, os
w = sys.argv[1]
for f in sorted(glob.glob(f"{w}/j*.json")):
    try:
        r = json.load(open(f)); r = r[0] if isinstance(r, list) else r
    except Exception as e:
        print(os.path.basename(f), "unreadable", e); continue
    cs = sorted(((x["compile_seconds"] or 0) for x in r["results"]), reverse=True)
    print(os.path.basename(f), "threads", r["compile_threads"], "wall", round(r["wall_seconds"], 2), "compile summed", round(r["compile_seconds"], 1),
          "eff", round(r["compile_efficiency"], 3), "slowest", round(cs[0], 1), "winner", [v for _, v in r["winner"]["params"]],
          "%.4f ms" % (r["winner_stats"]["mean"] * 1e3))
PY
cat $W/summary.txt $W/table.txt
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
{
  for t in conformance gpu wgpu-lib wgpu-devices open launch; do
    left=$(( 570 - ($(date +%s) - T0) ))
    if [ $left -lt 20 ]; then echo "--- $t: not run, the call's time is spent"; continue; fi
    echo "--- $t"
    rm -rf "$KERNTUNE_CACHE_DIR"
    KERNTUNE_BIN=$PWD/.device/kerntune KERNTUNE_REQUIRE_DEVICE=cuda,wgpu timeout $left /usr/bin/time -f "wall %e s" .device/tests/$t --test-threads=1 2>&1 | grep -E "^test |test result|wall|panicked"; echo "exit ${PIPESTATUS[0]}"
  done
} > $W/tests.txt 2>&1
grep -E "^---|test result|exit|wall" $W/tests.txt
cd /tmp && tar czf $O/convj.tgz convj
