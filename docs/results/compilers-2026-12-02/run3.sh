#!/usr/bin/env bash
# Third call, on an H200: compiler processes that end from outside. The first call's SIGSEGV
# from `kill` did not end its compiler (Rust's runtime handles a first SIGSEGV that is not a
# stack overflow by restoring the default action and returning, so a signal sent by `kill`,
# unlike a fault, is survived once); here one compiler gets SIGKILL (what the out-of-memory
# killer sends) and the other SIGSEGV twice. Then Ctrl-C (SIGINT) to the tuner, and SIGKILL to
# the tuner, each while compilers compile: which compiler processes are left a second later.
set -u
. scripts/device-env.sh
W=/tmp/compilers3; rm -rf $W; mkdir -p $W/hand
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
H=$W/hand
save() { (cd $W && tar czf $OUT/call3.tgz *.txt hand/* 2>/dev/null); }
outcomes() {
  python3 - "$1" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    for x in r["results"]:
        print(x["config"]["params"], x["outcome"], (x.get("message") or "")[:300], x.get("compile_seconds"))
PY
}
# The compiler processes alive now: pid, CPU seconds.
compilers() {
  for p in /proc/[0-9]*; do
    if tr '\0' '\n' 2>/dev/null < $p/environ | grep -qx 'KERNTUNE_CUDA_COMPILER=1'; then
      echo "${p#/proc/} $(awk '{print ($14 + $15) / 100}' $p/stat 2>/dev/null)"
    fi
  done
}
{
  tar xzf docs/results/overread-2026-12-02/call3.tgz -C $W hand/rep.cu hand/rep.toml
  sed 's/^L = .*/L = [2, 5]/' $H/rep.toml > $H/rep25.toml
  echo "== SIGKILL to one compiler, SIGSEGV twice to the other, while they compile L = 5 (--compile-timeout 20s)"
  export KERNTUNE_CACHE_DIR=$W/cache-kill CUDA_CACHE_PATH=$W/nvcache-kill
  t0=$(date +%s.%N)
  $NEW tune $H/rep25.toml --backend cuda --no-db --compile-timeout 20s --json > $W/kill-json.txt 2> $W/kill-err.txt &
  tuner=$!
  sleep 4
  compilers | sort -k2 -n -r | tee $W/kill-compilers.txt
  a=$(sed -n 1p $W/kill-compilers.txt | cut -d' ' -f1); b=$(sed -n 2p $W/kill-compilers.txt | cut -d' ' -f1)
  echo "kill -KILL $a; kill -SEGV $b (twice)"; kill -KILL $a; kill -SEGV $b; sleep 1; kill -SEGV $b
  wait $tuner; echo "exit $?, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s"
  outcomes $W/kill-json.txt
  grep -E "^(error|warning|note|winner)" $W/kill-err.txt | cut -c1-400
  save
  for sig in INT KILL; do
    echo "== SIG$sig to the tuner while L = 5 compiles (--compile-timeout 60s)"
    export KERNTUNE_CACHE_DIR=$W/cache-$sig CUDA_CACHE_PATH=$W/nvcache-$sig
    $NEW tune $H/rep25.toml --backend cuda --no-db --compile-timeout 60s > $W/tuner-$sig-out.txt 2> $W/tuner-$sig-err.txt &
    tuner=$!
    sleep 4
    echo "compilers before: [$(compilers | tr '\n' ';')]"
    kill -$sig $tuner
    wait $tuner; echo "tuner exit $?"
    sleep 1
    echo "compilers 1 s after: [$(compilers | tr '\n' ';')]"
    tail -3 $W/tuner-$sig-err.txt | cut -c1-300
    save
  done
} > $W/out.txt 2>&1
save
cat $W/out.txt
