#!/usr/bin/env bash
# One call on an H200, forty-fourth session, at the build of d618ac3: (1) a compiler process killed from outside
# (SIGKILL, as the out-of-memory killer would) costs nothing: the convolution, random 30 (seed
# 1), cold; 5 s in, SIGKILL to the compiler that has used the most CPU; its config must be
# compiled again, alone, and measured, and the report's notes say so; (2) the kerntune binary
# replaced while it tunes: SGEMM 410 from a copy of the binary, 3 s in the copy is replaced by
# a shell script, then SIGKILL to the kernel worker and to two compilers: the worker and the
# compilers must start again from the program running (exit 0, no note that compiles went to
# threads); (3) every GPU suite (`--memcheck` now runs compute-sanitizer on /proc/PID/exe only
# when the file was replaced: the suites' memcheck tests run on an unchanged file).
set -u
. scripts/device-env.sh
W=/tmp/retry; rm -rf $W; mkdir -p $W/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
save() { (cd $W && tar czf $OUT/call.tgz *.txt 2>/dev/null); }
pids_with() { # VAR=value: the processes whose environment holds it
  for e in /proc/[0-9]*/environ; do
    tr '\0' '\n' < $e 2>/dev/null | grep -qx "$1" && { p=${e#/proc/}; echo ${p%/environ}; }
  done
}
busiest() { # the compiler processes, most CPU first: pid cpu-seconds
  python3 - <<'PY'
import os
hz = os.sysconf("SC_CLK_TCK"); out = []
for p in os.listdir("/proc"):
    if not p.isdigit(): continue
    try:
        if b"KERNTUNE_CUDA_COMPILER=1" not in open(f"/proc/{p}/environ", "rb").read().split(b"\0"): continue
        f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        out.append(((int(f[11]) + int(f[12])) / hz, p))
    except OSError: pass
for cpu, p in sorted(out, reverse=True): print(p, cpu)
PY
}
summary() {
  python3 - "$1" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    res = r["results"]
    ok = sum(1 for x in res if x["outcome"] == "measured")
    print({k: r.get(k) for k in ["evaluated", "compiled", "compile_seconds", "wall_seconds"]}, "measured", ok, "of", len(res),
          "winner", r["winner"]["params"], round(r["winner_stats"]["mean"] * 1e3, 4), "ms")
    for x in res:
        if x["outcome"] != "measured": print("  failed", x["config"]["params"], (x.get("message") or "")[:300])
    for n in r.get("notes", []): print("  note:", n[:400])
PY
}
{
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  echo "== (1) convolution random 30 seed 1, cold; SIGKILL to the busiest compiler at 5 s"
  t0=$(date +%s.%N)
  $NEW tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 30 --seed 1 --top 1000 --no-db --json > $W/conv.txt 2> $W/conv-err.txt &
  p=$!
  sleep 5
  busiest > $W/conv-compilers-at-5s.txt; cat $W/conv-compilers-at-5s.txt | head -4
  victim=$(head -1 $W/conv-compilers-at-5s.txt | cut -d' ' -f1)
  echo "killing compiler $victim"; kill -KILL $victim
  wait $p; echo "exit $?, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s"
  summary $W/conv.txt; grep -iE "warn|again" $W/conv-err.txt | cut -c1-400 | head -5
  save

  echo "== (2) SGEMM 410 from a copy of the binary, replaced 3 s in; then SIGKILL to the worker and two compilers"
  export KERNTUNE_CACHE_DIR=$W/cache2 CUDA_CACHE_PATH=$W/nvcache2
  cp $NEW $W/bin/kerntune
  t0=$(date +%s.%N)
  $W/bin/kerntune tune benches/sgemm/sgemm.toml --backend cuda --top 1000 --no-db --json > $W/sgemm.txt 2> $W/sgemm-err.txt &
  p=$!
  sleep 3
  printf '#!/bin/sh\nexit 3\n' > $W/bin/kerntune.new && chmod +x $W/bin/kerntune.new && mv $W/bin/kerntune.new $W/bin/kerntune
  echo "replaced: $(ls -l /proc/$p/exe | sed 's/.*-> //')"
  w=$(pids_with KERNTUNE_CUDA_WORKER=1); echo "worker(s): $w"; kill -KILL $w
  c=$(busiest | head -2 | cut -d' ' -f1); echo "compilers killed: $c"; kill -KILL $c
  sleep 1
  echo "worker(s) 1 s later: $(pids_with KERNTUNE_CUDA_WORKER=1); their exe: $(for q in $(pids_with KERNTUNE_CUDA_WORKER=1); do ls -l /proc/$q/exe | sed 's/.*-> //'; done)"
  wait $p; echo "exit $?, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s"
  summary $W/sgemm.txt; grep -iE "warn" $W/sgemm-err.txt | cut -c1-400 | head -5
  save
  bash scripts/device-suites.sh $W
} > $W/out.txt 2>&1
save
cat $W/out.txt
