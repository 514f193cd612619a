#!/usr/bin/env bash
# One call on an H200, forty-fifth session, at the build of 5a295c1:
# (1) a compile killed from outside: the rule before (compiled again alone, once every running
#     compile has ended; the build of dec63e4, `kerntune-old`) against the new one (with at most
#     half the compile threads compiling, itself included): the convolution, random 30 (seed 1),
#     cold, SIGKILL to the busiest compiler 5 s in; twice each, alternating; and once without a
#     kill (what the kill costs);
# (2) a kernel worker that cannot start: strace injects EACCES into every execve of the kerntune
#     binary after its own (the worker's and the compilers'); the new build must end at once with
#     one message and store nothing (the same tune without strace then measures every config);
#     the build before, for contrast;
# (3) every suite.
set -u
. scripts/device-env.sh
W=/tmp/spared; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune OLD=$PWD/.device/kerntune-old
ST=$PWD/.kt/strace
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
save() { (cd $W && tar czf $OUT/call.tgz *.txt 2>/dev/null); }
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
  conv none-new $NEW none
  conv kill-old-1 $OLD kill
  conv kill-new-1 $NEW kill
  conv kill-old-2 $OLD kill
  conv kill-new-2 $NEW kill

  export KERNTUNE_CACHE_DIR=$W/cache-w CUDA_CACHE_PATH=$W/nvcache-w
  for b in new old; do
    bin=$NEW; [ $b = old ] && bin=$OLD
    echo "== (2) $b: SGEMM, every execve of $bin by its children refused (EACCES)"
    t0=$(date +%s.%N)
    LD_LIBRARY_PATH=$ST $ST/strace -f -qq --seccomp-bpf -o $W/strace-$b.txt -P $bin -e trace=execve -e inject=execve:error=EACCES \
      $bin tune benches/sgemm/sgemm.toml --backend cuda --db $W/db-$b.sqlite > $W/refused-$b.txt 2>&1
    echo "exit $?, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s"
    tail -c 1500 $W/refused-$b.txt; echo; echo "execve refused: $(grep -c INJECTED $W/strace-$b.txt)"
    echo "-- the same tune, nothing refused, same database"
    $bin tune benches/sgemm/sgemm.toml --backend cuda --db $W/db-$b.sqlite > $W/after-$b.txt 2>&1
    echo "exit $?"; grep -E "^(space|winner|error)" $W/after-$b.txt | cut -c1-600
    save
  done
  save
  bash scripts/device-suites.sh $W
  save
} 2>&1 | tee $W/log.txt
save
