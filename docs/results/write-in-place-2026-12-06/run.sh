#!/usr/bin/env bash
# The sixty-fourth session's GPU call: the whole-file writes at ddba8c9 (a link, a pipe,
# /dev/stdout written as named) where they matter on a GPU machine — the CUDA compile cache
# stores every CUBIN through them — and every GPU suite at the session's final build.
#  A. The example reduction through CUDA, cold compile cache, then again (every config served
#     from the cache the first tune wrote); the cache entries counted by kind.
#  B. The compile cache reached through a symbolic link (KERNTUNE_CACHE_DIR is a link to a
#     folder): tuned twice, the second served from the cache.
#  C. `kerntune report --out /dev/stdout | head -c 120`, and `db export --out /dev/stdout`, and
#     what /dev/stdout is afterwards (the machine runs commands as root, where the previous
#     session's build replaced it with a file).
#  D. Every GPU test suite (scripts/device-suites.sh).
#  E. (run before D) The convolution through CUDA, random 50, stopped twice for 8 s as a
#     suspended job is (SIGSTOP to its process group, then SIGCONT), each launch allowed 1 s:
#     what its summary says (e93db04: timeouts count the time awake).
# Build at the session's HEAD: `cargo build --release --features cuda -p kerntune`, `bash
# scripts/gpu-check.sh --prepare`, `tar cJf .pack/device.tar.xz .device`; carry .pack and .gl.
# Output: $OUT/run.txt and $OUT/suites/.
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
W=/tmp/wip; rm -rf $W; mkdir -p $W
R="examples/reduction/reduction.toml --backend cuda --no-db"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "== A. cold compile cache, then warm"
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_DISABLE=1
  for i in 1 2; do
    /usr/bin/time -f "wall %e s" $BIN tune $R --top 3 2>&1 | grep -E 'compile|winner|wall|error|warning' | cut -c1-400
    echo "tune $i: exit ${PIPESTATUS[0]}; cache holds: $(ls $W/cache/cuda | sed 's/.*\.//' | sort | uniq -c | tr '\n' ' ')"
  done
  echo "== B. the compile cache through a link"
  mkdir -p $W/real && ln -s $W/real $W/linked
  export KERNTUNE_CACHE_DIR=$W/linked
  for i in 1 2; do
    $BIN tune $R --top 1 2>&1 | grep -E 'compile|winner|error|warning' | cut -c1-400
    echo "tune $i: exit ${PIPESTATUS[0]}"
  done
  echo "link kept: $(test -L $W/linked && echo yes || echo NO); entries under it: $(ls $W/real/cuda | wc -l)"
  echo "== C. --out /dev/stdout (as $(id -un))"
  export KERNTUNE_CACHE_DIR=$W/cache
  $BIN tune examples/triad/triad.toml --backend cuda --db $W/db.json > /dev/null 2>&1
  $BIN report examples/triad/triad.toml --db $W/db.json --out /dev/stdout | head -c 120 > $W/head.txt
  echo "report into head -c 120: exit ${PIPESTATUS[0]}; head got: $(cat $W/head.txt)"
  $BIN db export --db $W/db.json --out /dev/stdout | head -c 120 > $W/head.txt
  echo "db export into head -c 120: exit ${PIPESTATUS[0]}; head got: $(cat $W/head.txt)"
  $BIN db export --db $W/db.json --out /dev/stdout | wc -c
  ls -l /dev/stdout
  echo "== E. a CUDA tune stopped twice for 8 s (SIGSTOP to its process group, then SIGCONT), --timeout 1"
  export KERNTUNE_CACHE_DIR=$W/cache-stop CUDA_CACHE_DISABLE=1
  setsid $BIN tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 1 --no-db --timeout 1 > $W/stop.txt 2>&1 &
  pg=$!
  sleep 4
  for i in 1 2; do kill -STOP -- -$pg; sleep 8; kill -CONT -- -$pg; sleep 3; done
  wait $pg; echo "exit $?"
  grep -E '^winner|evaluated|failures|timed out|stopped for|wall time' $W/stop.txt | cut -c1-400
} > $OUT/run.txt 2>&1
echo "== D. suites" >> $OUT/run.txt
bash scripts/device-suites.sh $OUT/suites >> $OUT/run.txt 2>&1
cat $OUT/run.txt
