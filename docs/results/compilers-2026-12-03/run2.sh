#!/usr/bin/env bash
# Second call, on an H200, at the build of 141d50f: (1) a tune run again on a warm compile cache
# starts no compiler process (SGEMM 410, once cold to fill the caches, then warm with --no-db,
# in compiler processes by default and on threads, alternated, twice each; every kerntune
# process counted and its memory summed every 0.1 s); (2) without a compile timeout, a compiler
# that crashes costs its config, not the tune: the rep kernel (L = 2 and 5, WG = 128 and 256),
# 4 s in, SIGSEGV (twice: Rust's runtime takes the first) to each compiler that has used over
# 2 s of CPU (the L = 5 ones); (3) every GPU suite.
set -u
. scripts/device-env.sh
W=/tmp/compilers6; rm -rf $W; mkdir -p $W/hand
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
save() { (cd $W && tar czf $OUT/call2.tgz *.txt hand/* 2>/dev/null); }
line() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))[0]
print({k: r.get(k) for k in ["evaluated", "compiled", "compile_cache_hits", "compile_seconds", "wall_seconds"]},
      "winner", r["winner"]["params"], round(r["winner_stats"]["mean"] * 1e3, 4), "ms")
PY
}
sample() {
  python3 - "$1" <<'PY'
import os, sys, time
pid = int(sys.argv[1]); most_n = 0; most_pss = 0; compilers = set()
while os.path.exists(f"/proc/{pid}"):
    n = 0; pss = 0
    for p in os.listdir("/proc"):
        if not p.isdigit(): continue
        try:
            if open(f"/proc/{p}/comm").read().strip() != "kerntune": continue
            if b"KERNTUNE_CUDA_COMPILER=1" in open(f"/proc/{p}/environ", "rb").read().split(b"\0"): compilers.add(p)
            for l in open(f"/proc/{p}/smaps_rollup"):
                if l.startswith("Pss:"): pss += int(l.split()[1]); n += 1; break
        except OSError: pass
    most_n = max(most_n, n); most_pss = max(most_pss, pss)
    time.sleep(0.1)
print(f"memory: at most {most_n} kerntune processes, at most {most_pss/1024:.0f} MiB PSS summed; {len(compilers)} compiler processes seen")
PY
}
run() { # name iso args...
  local name=$1 iso=$2; shift 2
  t0=$(date +%s.%N)
  KERNTUNE_COMPILE_ISOLATION=$iso $NEW tune "$@" --backend cuda --no-db --json > $W/$name.txt 2> $W/$name-err.txt &
  local p=$!
  sample $p > $W/$name-mem.txt
  wait $p; echo "exit $?, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s"
  line $W/$name.txt; cat $W/$name-mem.txt
  save
}
{
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  echo "== sgemm 410, cold, processes (the default)"
  run sgemm-cold "" benches/sgemm/sgemm.toml --top 1000
  for k in 1 2; do
    for mode in processes threads; do
      iso=0; [ $mode = processes ] && iso=
      echo "== sgemm 410, warm compile cache, $mode ($k)"
      run sgemm-warm-$mode-$k "$iso" benches/sgemm/sgemm.toml --top 1000
    done
  done
  tar xzf docs/results/overread-2026-12-02/call3.tgz -C $W hand/rep.cu hand/rep.toml
  sed -i 's/^L = .*/L = [2, 5]/' $W/hand/rep.toml
  export KERNTUNE_CACHE_DIR=$W/rcache CUDA_CACHE_PATH=$W/rnvcache
  echo "== rep (L = 2, 5; WG = 128, 256), no compile timeout, SIGSEGV to the busy compilers at 4 s"
  t0=$(date +%s.%N)
  $NEW tune $W/hand/rep.toml --backend cuda --no-db --json > $W/rep-json.txt 2> $W/rep-err.txt &
  p=$!
  sleep 4
  busy=$(python3 - <<'PY'
import os
hz = os.sysconf("SC_CLK_TCK")
for p in os.listdir("/proc"):
    if not p.isdigit(): continue
    try:
        if b"KERNTUNE_CUDA_COMPILER=1" not in open(f"/proc/{p}/environ", "rb").read().split(b"\0"): continue
        f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        if (int(f[11]) + int(f[12])) / hz > 2.0: print(p)
    except OSError: pass
PY
)
  echo "busy compilers at 4 s: $busy"
  for b in $busy; do kill -SEGV $b; done; sleep 0.2; for b in $busy; do kill -SEGV $b 2>/dev/null; done
  wait $p; echo "exit $?, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s"
  python3 - $W/rep-json.txt <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    for x in r["results"]:
        print(x["config"]["params"], x["outcome"], (x.get("message") or "")[:220])
PY
  sleep 1; echo "compiler processes left: $(grep -l 'KERNTUNE_CUDA_COMPILER=1' /proc/[0-9]*/environ 2>/dev/null | wc -l)"
  save
  bash scripts/device-suites.sh $W
} > $W/out.txt 2>&1
save
cat $W/out.txt
