#!/usr/bin/env bash
# The H200 call of the forty-seventh session: (1) compile timeouts stored — the macro-expanded
# kernel of 2026-12-02 (10^L statements, L = 2..5, WG = 128, 256) tuned into a database under
# --compile-timeout 5s, then again with --force under the same timeout (the old build waits for
# the compiles again; the new one reads them back), a plain tune without a timeout (the stored
# winner answers), and --force under 8 s (compiled again, with the database's note); (2) a
# compiler process that crashes says why: NVRTC wrapped by a shim (nvrtc-shim.c, built here)
# that aborts with an assertion's line on any compile with -DCRASH=1; (3) every GPU suite.
set -u
. scripts/device-env.sh
D=docs/results/stored-timeouts-2026-12-03
W=/tmp/stored; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
save() { (cd $W && tar czf $OUT/call.tgz *.txt); }
secs() { python3 -c "print(f'{$2-$1:.2f}')"; }
tune() { # NAME BINARY ARGS...: runs, keeps the output (tables cut), prints exit and wall
  local name=$1 bin=$2; shift 2
  local t0=$(date +%s.%N)
  $bin tune "$@" > $W/$name.txt 2>&1; local rc=$?
  local t1=$(date +%s.%N)
  echo "== $name: $bin tune $*"
  grep -vE "^(┌|├|╞|└|│)" $W/$name.txt | cut -c1-900
  echo "exit $rc, $(secs $t0 $t1) s"
}
{
  for b in old new; do
    bin=$PWD/.device/kerntune; [ $b = old ] && bin=$PWD/.device/kerntune-old
    export KERNTUNE_CACHE_DIR=$W/cache-$b CUDA_CACHE_PATH=$W/nv-$b
    tune $b-1-timeout5 $bin $D/rep.toml --backend cuda --db $W/$b.sqlite --compile-timeout 5s
    tune $b-2-force-timeout5 $bin $D/rep.toml --backend cuda --db $W/$b.sqlite --compile-timeout 5s --force
    tune $b-3-plain $bin $D/rep.toml --backend cuda --db $W/$b.sqlite
    [ $b = new ] && tune $b-4-force-timeout8 $bin $D/rep.toml --backend cuda --db $W/$b.sqlite --compile-timeout 8s --force
    save
  done
  mkdir -p /tmp/shim && cp .kt/shim/libnvrtc.so /tmp/shim/
  for b in old new; do
    bin=$PWD/.device/kerntune; [ $b = old ] && bin=$PWD/.device/kerntune-old
    export KERNTUNE_CACHE_DIR=$W/crash-cache-$b CUDA_CACHE_PATH=$W/crash-nv-$b
    LD_LIBRARY_PATH=/tmp/shim:$LD_LIBRARY_PATH tune crash-$b $bin $D/crash.toml --backend cuda --no-db
    save
  done
  bash scripts/device-suites.sh $W
} 2>&1 | tee $W/log.txt
save
