#!/usr/bin/env bash
# First call, on an H200 (forty-third session): compiler processes started ahead of the first
# compile, each loading NVRTC as it starts, and made the default. What they cost a tune that
# needs no timeout against compiles on the tuner's threads (KERNTUNE_COMPILE_ISOLATION=0): SGEMM's
# 410 configs, cold, three runs each, alternated; the compile-heavy convolution (random, 50
# evaluations, seed 1), cold, two each. Every run's memory is sampled every 0.1 s (the summed
# PSS of every process named kerntune: the tuner, its compilers and workers). Then every GPU
# suite.
set -u
. scripts/device-env.sh
W=/tmp/compilers5; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket)' > $W/cpu.txt
NEW=$PWD/.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
save() { (cd $W && tar czf $OUT/call1.tgz *.txt 2>/dev/null); }
cold() { export KERNTUNE_CACHE_DIR=$(mktemp -d) CUDA_CACHE_PATH=$(mktemp -d); }
line() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))[0]
print({k: r.get(k) for k in ["evaluated", "compiled", "compile_seconds", "compile_threads", "compile_efficiency", "wall_seconds"]},
      "winner", r["winner"]["params"], round(r["winner_stats"]["mean"] * 1e3, 4), "ms")
PY
}
# Samples until process $1 ends: the most kerntune processes at once and their most summed PSS.
sample() {
  python3 - "$1" <<'PY'
import os, sys, time
pid = int(sys.argv[1]); most_n = 0; most_pss = 0
while os.path.exists(f"/proc/{pid}"):
    n = 0; pss = 0
    for p in os.listdir("/proc"):
        if not p.isdigit(): continue
        try:
            if open(f"/proc/{p}/comm").read().strip() != "kerntune": continue
            for l in open(f"/proc/{p}/smaps_rollup"):
                if l.startswith("Pss:"): pss += int(l.split()[1]); n += 1; break
        except OSError: pass
    most_n = max(most_n, n); most_pss = max(most_pss, pss)
    time.sleep(0.1)
print(f"memory: at most {most_n} kerntune processes, at most {most_pss/1024:.0f} MiB PSS summed")
PY
}
run() { # name iso args...
  local name=$1 iso=$2; shift 2
  cold
  t0=$(date +%s.%N)
  KERNTUNE_COMPILE_ISOLATION=$iso $NEW tune "$@" --backend cuda --no-db --json > $W/$name.txt 2> $W/$name-err.txt &
  local p=$!
  sample $p > $W/$name-mem.txt
  wait $p; echo "exit $?, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s"
  line $W/$name.txt; cat $W/$name-mem.txt
  save
}
{
  for k in 1 2 3; do
    for mode in threads processes; do
      iso=0; [ $mode = processes ] && iso=
      echo "== sgemm 410, cold, $mode ($k)"
      run sgemm-$mode-$k "$iso" benches/sgemm/sgemm.toml --top 1000
    done
  done
  for k in 1 2; do
    for mode in threads processes; do
      iso=0; [ $mode = processes ] && iso=
      echo "== convolution random 50 seed 1, cold, $mode ($k)"
      run conv-$mode-$k "$iso" examples/convolution/convolution.toml --strategy random --budget 50 --seed 1 --top 1000
    done
  done
  bash scripts/device-suites.sh $W
} > $W/out.txt 2>&1
save
cat $W/out.txt
