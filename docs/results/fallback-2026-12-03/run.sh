#!/usr/bin/env bash
# The H200 call of the forty-sixth session: the example application (the launch API,
# Policy::Tune) on CUDA when its kernel worker cannot start (strace refuses every execve of the
# app by its children, EACCES): the build before (45c58ff, .device/kerntune-app-old) exits with
# the tune's error; this build runs the default config, verified, and stores nothing; the same
# command without strace then tunes. Then every suite (scripts/device-suites.sh).
set -u
. scripts/device-env.sh
W=/tmp/fallback; rm -rf $W; mkdir -p $W
ST=$PWD/.kt/strace
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
save() { (cd $W && tar czf $OUT/call.tgz *.txt 2>/dev/null); }
{
  for b in old new; do
    bin=$PWD/.device/kerntune-app; [ $b = old ] && bin=$PWD/.device/kerntune-app-old
    export KERNTUNE_CACHE_DIR=$W/cache-$b CUDA_CACHE_PATH=$W/nvcache-$b
    echo "== $b: the app, every execve of $bin by its children refused (EACCES)"
    t0=$(date +%s.%N)
    LD_LIBRARY_PATH=$ST $ST/strace -f -qq --seccomp-bpf -o $W/strace-$b.txt -P $bin -e trace=execve -e inject=execve:error=EACCES \
      $bin --backend cuda --n 16777216 --iters 100 --spec examples/triad/triad.toml > $W/refused-$b.txt 2>&1
    echo "exit $?, $(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')") s; execve refused: $(grep -c INJECTED $W/strace-$b.txt)"
    cut -c1-700 $W/refused-$b.txt
    echo "-- the database after it: $(ls $KERNTUNE_CACHE_DIR/db.sqlite 2>/dev/null || echo none)"
    echo "-- $b: the same command, nothing refused"
    $bin --backend cuda --n 16777216 --iters 100 --spec examples/triad/triad.toml > $W/after-$b.txt 2>&1
    echo "exit $?"; cut -c1-400 $W/after-$b.txt | grep -v "^\s*$" | tail -6
  done
  save
  bash scripts/device-suites.sh $W
  save
} 2>&1 | tee $W/log.txt
save
