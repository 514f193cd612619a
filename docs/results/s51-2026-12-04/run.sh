#!/usr/bin/env bash
# The fifty-first session's H200 call. (1) Jobs after a config's record kept with it: SGEMM's
# 410 configs cold with `--recheck 20`, and the triad with `--memcheck`, each into its own
# database; what the database, `--json` and the report keep of the recheck's and the memory
# checker's jobs. (2) The convolution (random 50) drawn by the report, with its parameter pair.
# (3) A kernel's compile footprint remembered, with real NVRTC compiles in a memory cgroup
# (where this machine lets one be made): the convolution unlimited once (its footprint kept),
# then limited to six footprints (and 1 GiB for the tuner and its worker) with 16 compile threads, once without the kept footprint
# and once with it, counting out-of-memory kills. (4) Every GPU suite.
set -u
. scripts/device-env.sh
W=/tmp/s51; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
K=$PWD/.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
TAG=${TAG:-call1}
save() { (cd $W && tar czf $OUT/$TAG.tgz *.txt *.html *.json *.sqlite 2>/dev/null); }
secs() { python3 -c "print(f'{$2-$1:.2f}')"; }
tune() { # NAME SPEC ARGS...
  local name=$1 spec=$2; shift 2
  local t0=$(date +%s.%N)
  timeout 240 $K tune $spec --db $W/$name.sqlite --top 3 "$@" > $W/$name.txt 2>&1; local rc=$?
  local t1=$(date +%s.%N)
  echo "== $name: kerntune tune $spec $*"
  grep -vE "^(┌|├|╞|└|│)" $W/$name.txt | grep -vE "^(note: racing|note: clock)" | cut -c1-900
  echo "exit $rc, $(secs $t0 $t1) s"
  $K report $spec --db $W/$name.sqlite -o $W/$name.html 2>&1 | tail -1
  save
}
spans() { # DB: span kinds kept per run, from the database
  python3 - "$1" <<'PY'
import sqlite3, json, sys, collections
c = sqlite3.connect(sys.argv[1])
kinds = collections.Counter()
for (t,) in c.execute("select name from sqlite_master where type='table'"):
    cols = [r[1] for r in c.execute(f"pragma table_info({t})")]
    for col in cols:
        for (v,) in c.execute(f"select {col} from {t}"):
            if isinstance(v, (str, bytes)) and b'"spans"' in (v if isinstance(v, bytes) else v.encode()):
                try: d = json.loads(v)
                except Exception: continue
                stack = [d]
                while stack:
                    x = stack.pop()
                    if isinstance(x, dict):
                        if isinstance(x.get("spans"), list):
                            for s in x["spans"]: kinds[s.get("what")] += 1
                        stack.extend(x.values())
                    elif isinstance(x, list): stack.extend(x)
print("span kinds in the database:", dict(kinds))
PY
}
cgroup_run() { # NAME LIMIT_BYTES CMD...: runs CMD in a new memory cgroup, prints its oom kills
  local name=$1 limit=$2; shift 2
  local d v2=1
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then d=/sys/fs/cgroup/kt-$name; else d=/sys/fs/cgroup/memory/kt-$name; v2=0; fi
  if ! mkdir $d 2>/dev/null; then echo "$name: no memory cgroup can be made here ($d)"; return 1; fi
  if [ $v2 = 1 ]; then echo $limit > $d/memory.max && echo 0 > $d/memory.swap.max 2>/dev/null; else echo $limit > $d/memory.limit_in_bytes; fi || { echo "$name: cannot set the limit"; rmdir $d; return 1; }
  local t0=$(date +%s.%N)
  bash -c "echo \$\$ > $d/cgroup.procs && exec \"\$@\"" _ "$@"; local rc=$?
  local t1=$(date +%s.%N)
  if [ $v2 = 1 ]; then echo "$name: exit $rc, $(secs $t0 $t1) s, $(grep oom_kill $d/memory.events | tr '\n' ' ')"; else echo "$name: exit $rc, $(secs $t0 $t1) s, $(grep oom_kill $d/memory.oom_control)"; fi
  sleep 1; rmdir $d 2>/dev/null
}
{
  export KERNTUNE_CACHE_DIR=$W/cache-sgemm CUDA_CACHE_PATH=$W/cuda-cache-sgemm
  tune sgemm-recheck benches/sgemm/sgemm.toml --backend cuda -j 16 --recheck 20
  spans $W/sgemm-recheck.sqlite
  $K tune benches/sgemm/sgemm.toml --backend cuda -j 16 --no-db --recheck 5 --json > $W/sgemm-recheck.json 2> $W/sgemm-recheck-json-err.txt
  python3 -c "
import json, collections
r = json.load(open('$W/sgemm-recheck.json'))[0]
k = collections.Counter(s['what'] for x in r['results'] for s in (x.get('spans') or []))
print('json span kinds:', dict(k)); print('json time bound:', r['time']['bound'], 'busy', [round(d['busy_s'],2) for d in r['time']['devices']])"
  export KERNTUNE_CACHE_DIR=$W/cache-triad
  tune triad-memcheck examples/triad/triad.toml --backend cuda --memcheck
  spans $W/triad-memcheck.sqlite
  export KERNTUNE_CACHE_DIR=$W/cache-conv CUDA_CACHE_PATH=$W/cuda-cache-conv
  tune conv-cold examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 1
  grep -o 'data-chart="interaction"' $W/conv-cold.html | head -1
  echo "kept footprint: $(ls $W/cache-conv/cuda/*.mem 2>/dev/null | head -1) $(cat $W/cache-conv/cuda/*.mem 2>/dev/null)"
  F=$(cat $W/cache-conv/cuda/*.mem 2>/dev/null | head -1)
  if [ -n "$F" ]; then
    L=$(( F * 6 + (1 << 30) ))
    echo "limit: $L bytes (six footprints of $F, and 1 GiB for the tuner and its kernel worker), -j 16"
    # Without the kept footprint (a fresh cache folder), then with it (copied in).
    mkdir -p $W/cache-mem1 $W/cache-mem2/cuda; cp $W/cache-conv/cuda/*.mem $W/cache-mem2/cuda/
    KERNTUNE_CACHE_DIR=$W/cache-mem1 CUDA_CACHE_PATH=$W/cuda-mem1 cgroup_run nothing-kept $L timeout 300 $K tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 2 -j 16 --no-db > $W/mem-nothing-kept.txt 2>&1
    KERNTUNE_CACHE_DIR=$W/cache-mem2 CUDA_CACHE_PATH=$W/cuda-mem2 cgroup_run kept $L timeout 300 $K tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 2 -j 16 --no-db > $W/mem-kept.txt 2>&1
    cat $W/mem-nothing-kept.txt $W/mem-kept.txt | grep -E "^(nothing-kept|kept):|compile memory|compiled again|measured|winner" | cut -c1-600
  fi
  save
  bash scripts/device-suites.sh $W
} 2>&1 | tee $W/log.txt
save
