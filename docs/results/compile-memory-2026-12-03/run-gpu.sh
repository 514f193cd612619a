#!/usr/bin/env bash
# The H200 call of the forty-seventh session at the final build: what the compile memory check
# costs where memory is plentiful (the device machine sets no memory limit): SGEMM's 410 configs,
# cold, twice each with the check on (the default) and off (KERNTUNE_COMPILE_MEMORY_CHECK=0),
# alternated, then a warm tune of each (the compile cache of the cold one); the notes must hold
# no `compile memory:` line. Then every GPU suite.
set -u
. scripts/device-env.sh
W=/tmp/memcheck; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
save() { (cd $W && tar czf $OUT/call.tgz *.txt 2>/dev/null); }
line() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))[0]
print({k: r.get(k) for k in ["evaluated", "compiled", "compile_seconds", "compile_efficiency", "wall_seconds"]},
      "winner", r["winner"]["params"], round(r["winner_stats"]["mean"] * 1e3, 4), "ms",
      "memory notes:", [n for n in r.get("notes", []) if n.startswith("compile memory")])
PY
}
run() { # name check(1|0) cache args...
  local name=$1 check=$2 cache=$3; shift 3
  t0=$(date +%s.%N)
  KERNTUNE_COMPILE_MEMORY_CHECK=$check KERNTUNE_CACHE_DIR=$cache CUDA_CACHE_PATH=$cache/nv $NEW tune "$@" --backend cuda --no-db --json > $W/$name.txt 2> $W/$name-err.txt
  echo "== $name: exit $?, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s"
  line $W/$name.txt
  save
}
{
  for k in 1 2; do
    for check in 1 0; do
      c=$W/cache-$check-$k; mkdir -p $c
      run sgemm-cold-check$check-$k $check $c benches/sgemm/sgemm.toml --top 1000
      run sgemm-warm-check$check-$k $check $c benches/sgemm/sgemm.toml --top 1000
    done
  done
  bash scripts/device-suites.sh $W
} > $W/out.txt 2>&1
save
cat $W/out.txt
