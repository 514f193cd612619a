#!/usr/bin/env bash
# The racing change (a verification launch races its config alone only on a device whose
# verification launches were seen to run like the launches after them) on an H200, one
# call: SGEMM 410 through CUDA with a warm compile cache and no database, the build before the
# change and after, alternating (two each); the triad through Vulkan the same way; then the GPU
# test suites at this build.
set -u
O=$OUT; T0=$(date +%s)
. scripts/device-env.sh
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
W=/tmp/racing; rm -rf $W $KERNTUNE_CACHE_DIR; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
one() { local name=$1 bin=$2; shift 2; /usr/bin/time -f "wall %e s" .device/$bin tune "$@" --no-db --top 1000 --json > $W/$name.json 2> $W/$name.log; echo "$name: exit $? $(grep -h '^wall' $W/$name.log)"; }
{
  # Fill the compile cache first (not compared).
  one sgemm-fill kerntune benches/sgemm/sgemm.toml --backend cuda
  for i in 1 2; do
    one sgemm-before-$i kerntune-before benches/sgemm/sgemm.toml --backend cuda
    one sgemm-after-$i kerntune benches/sgemm/sgemm.toml --backend cuda
  done
  for i in 1 2; do
    one triad-vk-before-$i kerntune-before examples/triad/triad.toml --backend wgpu
    one triad-vk-after-$i kerntune examples/triad/triad.toml --backend wgpu
  done
} > $W/summary.txt 2>&1
python3 - $W > $W/table.txt 2>&1 <<'PY'
import json, sys, glob, os
w = sys.argv[1]
for f in sorted(glob.glob(f"{w}/*-*.json")):
    try:
        r = json.load(open(f)); r = r[0] if isinstance(r, list) else r
    except Exception as e:
        print(os.path.basename(f), "unreadable", e); continue
    st = [x["stats"] for x in r["results"] if x.get("stats")]
    raced = [s for s in st if s["raced"]]
    one = [s for s in raced if s["samples"] == 1]
    ev = sum((x.get("eval_seconds") or 0) for x in r["results"])
    print(os.path.basename(f), "wall", round(r["wall_seconds"], 2), "measured", len(st), "raced", len(raced), "raced on one launch", len(one),
          "eval s summed", round(ev, 2), "winner", [v for _, v in r["winner"]["params"]], "%.4f ms" % (r["winner_stats"]["mean"] * 1e3))
PY
cat $W/summary.txt $W/table.txt
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
cd /tmp && tar czf $O/racing.tgz racing
