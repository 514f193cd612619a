#!/usr/bin/env bash
# The second call on an H200, forty-fifth session, at the session's last code (883f783):
# (1) a compile killed by hand (SIGKILL from this script, the out-of-memory killer's count
#     unmoved): now compiled again at once, not spared, and the note says it was not the
#     out-of-memory killer; the convolution, random 30 (seed 1), cold, 5 s in; twice;
# (2) the worker that cannot start (strace refuses every execve of the binary by its children):
#     one message, nothing stored, the same tune after measures every config;
# (3) every suite.
set -u
. scripts/device-env.sh
W=/tmp/spared2; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
ST=$PWD/.kt/strace
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
save() { (cd $W && tar czf $OUT/call2.tgz *.txt 2>/dev/null); }
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
conv() { # name binary kill?
  export KERNTUNE_CACHE_DIR=$W/cache-$1 CUDA_CACHE_PATH=$W/nvcache-$1
  echo "== (1) $1: convolution random 30 seed 1, cold$( [ $3 = kill ] && echo '; SIGKILL to the busiest compiler at 5 s')"
  t0=$(date +%s.%N)
  $2 tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 30 --seed 1 --top 1000 --no-db --json > $W/conv-$1.txt 2> $W/conv-$1-err.txt &
  p=$!
  if [ $3 = kill ]; then
    sleep 5
    busiest > $W/conv-$1-compilers-at-5s.txt; head -3 $W/conv-$1-compilers-at-5s.txt
    victim=$(head -1 $W/conv-$1-compilers-at-5s.txt | cut -d' ' -f1)
    echo "killing compiler $victim ($(wc -l < $W/conv-$1-compilers-at-5s.txt) compilers)"; kill -KILL $victim
  fi
  wait $p; echo "exit $?, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s"
  summary $W/conv-$1.txt; grep -iE "warn|again" $W/conv-$1-err.txt | cut -c1-400 | head -5
  save
}
{
  conv kill-hand-1 $NEW kill
  conv kill-hand-2 $NEW kill
  grep -h "oom\|compiled again" $W/conv-kill-hand-*.txt | cut -c1-300 | head -4

  export KERNTUNE_CACHE_DIR=$W/cache-w CUDA_CACHE_PATH=$W/nvcache-w
  bin=$NEW
  echo "== (2) SGEMM, every execve of $bin by its children refused (EACCES)"
  t0=$(date +%s.%N)
  LD_LIBRARY_PATH=$ST $ST/strace -f -qq --seccomp-bpf -o $W/strace.txt -P $bin -e trace=execve -e inject=execve:error=EACCES \
    $bin tune benches/sgemm/sgemm.toml --backend cuda --db $W/db.sqlite > $W/refused.txt 2>&1
  echo "exit $?, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s"
  tail -c 1500 $W/refused.txt; echo
  echo "-- the same tune, nothing refused, same database"
  $bin tune benches/sgemm/sgemm.toml --backend cuda --db $W/db.sqlite > $W/after.txt 2>&1
  echo "exit $?"; grep -E "^(space|winner|error)" $W/after.txt | cut -c1-600
  save
  bash scripts/device-suites.sh $W
  save
} 2>&1 | tee $W/log.txt
save
