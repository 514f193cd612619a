#!/usr/bin/env bash
# A node of four GPUs (`nvidia-h100-x4` or `nvidia-h200-x4`): the GPU test suites at this code
# with every device visible; SGEMM 410 with the compile cache warm (a cold tune on every device
# fills it first), database cleared before each run, one GPU against --devices all at 4096³ and
# 8192³ (alternating, twice at 8192³); then the convolution, random 50 (seed 1), cold, no prior,
# with -j 16, 32 and 64 compile threads (every core of the host).
set -u
O=$OUT
. scripts/device-env.sh
W=/tmp/x4; rm -rf $W; mkdir -p $W
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; lscpu | grep -E 'Model name'; } > $W/host.txt 2>&1
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
{
  for t in .device/tests/*; do
    echo "--- $t"
    rm -rf "$KERNTUNE_CACHE_DIR"
    KERNTUNE_BIN=$PWD/.device/kerntune KERNTUNE_REQUIRE_DEVICE=cuda,wgpu /usr/bin/time -f "wall %e s" "$t" --test-threads=1 2>&1 | grep -E "^test |test result|wall|panicked"; echo "exit ${PIPESTATUS[0]}"
  done
} > $W/tests.txt 2>&1
K=.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
rm -rf "$KERNTUNE_CACHE_DIR"
sg() { # name key devices
  rm -rf $KERNTUNE_CACHE_DIR/db.sqlite*
  /usr/bin/time -f "wall %e s" $K tune benches/sgemm/sgemm.toml --backend cuda --key M=$2,N=$2,K=$2 $3 --top 3 --json > $W/$1.json 2> $W/$1.log
  echo "$1: exit $? $(grep -h '^wall' $W/$1.log)"
}
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d); }
cv() { local name=$1; shift; cold; /usr/bin/time -f "wall %e s" $K tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 1 --top 1000 --no-db --json "$@" > $W/$name.json 2> $W/$name.log; echo "$name: exit $? $(grep -h '^wall' $W/$name.log)"; }
{
  sg s4096-cold-all 4096 "--devices all"
  sg s4096-one 4096 "--device 0"
  sg s4096-all 4096 "--devices all"
  for i in 1 2; do
    sg s8192-one-$i 8192 "--device 0"
    sg s8192-all-$i 8192 "--devices all"
  done
  cv c-j16 -j 16
  cv c-j32 -j 32
  cv c-j64 -j 64
} > $W/summary.txt 2>&1
python3 - $W > $W/table.txt 2>&1 <<'PY'
import json, sys, glob, os
w = sys.argv[1]
for f in sorted(glob.glob(f"{w}/[sc]*.json")):
    try:
        r = json.load(open(f)); r = r[0] if isinstance(r, list) else r
    except Exception as e:
        print(os.path.basename(f), "unreadable", e); continue
    devs = [(d.get("name"), d.get("measured")) for d in (r.get("devices") or [])]
    print(os.path.basename(f), "wall", round(r["wall_seconds"], 2), "evaluated", r["evaluated"], "compiled", r["compiled"], "threads", r["compile_threads"],
          "compile summed", round(r["compile_seconds"], 1), "eff", r["compile_efficiency"] and round(r["compile_efficiency"], 3),
          "winner", [v for _, v in r["winner"]["params"]], "%.4f ms" % (r["winner_stats"]["mean"] * 1e3), "devices", devs, "disagreement", r.get("disagreement"))
PY
grep -E "^---|test result|exit|wall|panicked" $W/tests.txt; cat $W/host.txt $W/summary.txt $W/table.txt
cd /tmp && tar czf $O/x4.tgz x4
