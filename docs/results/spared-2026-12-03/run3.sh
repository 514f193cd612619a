#!/usr/bin/env bash
# The third H200 call, forty-fifth session, at the session's last code (b3ceb4c): a compiler and
# the kernel worker killed by hand mid-tune (their notes say not the out-of-memory killer), a
# compiler started through /proc/PID/exe after the binary is replaced (named after the program,
# not `exe`), and every suite.
set -u
. scripts/device-env.sh
W=/tmp/spared3; rm -rf $W; mkdir -p $W/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
save() { (cd $W && tar czf $OUT/call3.tgz *.txt 2>/dev/null); }
pids_with() { # VAR=value: the processes whose environment holds it
  for e in /proc/[0-9]*/environ; do
    tr '\0' '\n' < $e 2>/dev/null | grep -qx "$1" && { p=${e#/proc/}; echo ${p%/environ}; }
  done
}
{
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  echo "== SGEMM 410 from a copy of the binary, replaced 2 s in; then SIGKILL to the worker and a compiler"
  cp $NEW $W/bin/kerntune
  t0=$(date +%s.%N)
  $W/bin/kerntune tune benches/sgemm/sgemm.toml --backend cuda --top 1000 --no-db --json > $W/sgemm.txt 2> $W/sgemm-err.txt &
  p=$!
  sleep 2
  printf '#!/bin/sh\nexit 3\n' > $W/bin/kerntune.new && chmod +x $W/bin/kerntune.new && mv $W/bin/kerntune.new $W/bin/kerntune
  w=$(pids_with KERNTUNE_CUDA_WORKER=1); echo "worker(s): $w"; kill -KILL $w
  c=$(pids_with KERNTUNE_CUDA_COMPILER=1 | head -1); echo "compiler killed: $c"; kill -KILL $c
  sleep 1
  for q in $(pids_with KERNTUNE_CUDA_WORKER=1) $(pids_with KERNTUNE_CUDA_COMPILER=1 | head -3); do echo "started again: $q named $(cat /proc/$q/comm), exe $(ls -l /proc/$q/exe | sed 's/.*-> //')"; done
  wait $p; echo "exit $?, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s"
  python3 - $W/sgemm.txt <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    res = r["results"]
    print("measured", sum(1 for x in res if x["outcome"] == "measured"), "of", len(res), "winner", r["winner"]["params"], round(r["winner_stats"]["mean"] * 1e3, 4), "ms")
    for n in r.get("notes", []): print("  note:", n[:500])
PY
  save
  bash scripts/device-suites.sh $W
  save
} 2>&1 | tee $W/log.txt
save
