#!/usr/bin/env bash
# The fifty-third session's H200 calls: do idle compiler processes that give back the memory their
# compiles freed (malloc_trim after each compile) lower a tune's memory, and does a tune in a
# memory-limited cgroup then finish sooner? The convolution (Kernel Tuner's 2-D convolution,
# random 50, -j 16, cold: fresh kerntune and NVRTC caches each run), with the binary before the
# change (.device/kerntune-old, the fifty-second session's call-2 build) and after
# (.device/kerntune):
#  (1) in an unlimited cgroup, old then new (seed 1): wall and the cgroup's memory.peak;
#  (2) in a cgroup limited to LIMIT bytes (default: 0.6 of the old binary's unlimited peak
#      in (1)), seed 2, `--budget 50,120s`, each binary with its own unlimited run's kept compile
#      footprint (as in the fifty-second session): new, old, then new with the memory check off
#      (KERNTUNE_COMPILE_MEMORY_CHECK=0). Exit, wall, out-of-memory kills, peak, configs
#      compiled, and the tune's notes on memory.
# TAG names the output archive; ORDER=rev runs (2) old first.
set -u
. scripts/device-env.sh
W=/tmp/s53; rm -rf $W; mkdir -p $W
NEW=$PWD/.device/kerntune OLD=$PWD/.device/kerntune-old
TAG=${TAG:-call1}
save() { (cd $W && tar czf $OUT/$TAG.tgz *.txt 2>/dev/null); }
secs() { python3 -c "print(f'{$2-$1:.2f}')"; }
mkcg() { local d=/sys/fs/cgroup/kt-$1; mkdir $d || return 1; echo $2 > $d/memory.max; echo 0 > $d/memory.swap.max 2>/dev/null; echo $d; }
# tune NAME BIN LIMIT SEED BUDGET TIMEOUT [ENV...]
tune() {
  local name=$1 bin=$2 lim=$3 seed=$4 budget=$5 to=$6; shift 6
  local d; d=$(mkcg $name $lim) || return
  local t0 t1 rc
  t0=$(date +%s.%N)
  env "$@" KERNTUNE_CACHE_DIR=$W/cache-$name CUDA_CACHE_PATH=$W/cuda-$name bash -c "echo \$\$ > $d/cgroup.procs && exec timeout $to $bin tune examples/convolution/convolution.toml --backend cuda --strategy random --budget $budget --seed $seed -j 16 --no-db" > $W/$name.txt 2>&1; rc=$?
  t1=$(date +%s.%N)
  PEAK=$(cat $d/memory.peak)
  echo "$name: exit $rc, $(secs $t0 $t1) s, $(grep oom_kill $d/memory.events | tr '\n' ' '), peak $PEAK bytes ($(( PEAK >> 20 )) MiB); $(grep -c 'worker died' $W/$name.txt) worker deaths, $(grep -c 'compiler ended' $W/$name.txt) compiler deaths"
  grep -v " WARN " $W/$name.txt | grep -E "^winner|^compiled|^time|compile memory|out-of-memory|^error" | cut -c1-700
  sleep 1; rmdir $d
}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; free -m | head -2
  tune old-unlimited $OLD max 1 50 120; POLD=$PEAK
  tune new-unlimited $NEW max 1 50 120
  L=${LIMIT:-$(( POLD * 6 / 10 ))}
  echo "limit: $L bytes"
  seedmem() { mkdir -p $W/cache-$1/cuda; cp $W/cache-$2/cuda/*.mem $W/cache-$1/cuda/ 2>/dev/null; }
  if [ "${ORDER:-}" = rev ]; then set -- old new; else set -- new old; fi
  for b in "$@"; do
    seedmem $b-limited $b-unlimited
    if [ $b = new ]; then bin=$NEW; else bin=$OLD; fi
    tune $b-limited $bin $L 2 50,120s 135
    save
  done
  seedmem new-nocheck new-unlimited
  tune new-nocheck $NEW $L 2 50,120s 135 KERNTUNE_COMPILE_MEMORY_CHECK=0
} 2>&1 | tee $W/log.txt
save
