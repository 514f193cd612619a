#!/usr/bin/env bash
# The fifty-second session's H200 call: a tune in a memory cgroup too small for the compiles
# beside the kernel worker, as in the fifty-first session's third call (run3.sh there, where
# one such tune ended with "no valid config left … 42 × device lost" after its worker was
# killed 96 times). (1) The convolution (random 50, seed 1, -j 16) in an unlimited cgroup: its
# peak P and the compile footprint kept. (2) The same tune with seed 2 in a cgroup of 0.6 P with
# that footprint kept, twice, each on a fresh compile cache: exit, time, out-of-memory kills,
# and the tune's notes on workers and compiles. Run twice: `TAG=call1` at the first build
# (kills halved the compile hold at once), `TAG=call2` with the devices waiting for the compiles
# running to come down to the hold and the worker's oom_score_adj 100; call2's tunes also stop at
# 100 s (`--budget 50,100s`) so that a slow one still reports.
set -u
. scripts/device-env.sh
W=/tmp/s52; rm -rf $W; mkdir -p $W
K=$PWD/.device/kerntune
TAG=${TAG:-call1}
BUDGET=${BUDGET:-50}
save() { (cd $W && tar czf $OUT/$TAG.tgz *.txt 2>/dev/null); }
secs() { python3 -c "print(f'{$2-$1:.2f}')"; }
mkcg() { local d=/sys/fs/cgroup/kt-$1; mkdir $d || return 1; echo $2 > $d/memory.max; echo 0 > $d/memory.swap.max 2>/dev/null; echo $d; }
{
  export KERNTUNE_CACHE_DIR=$W/cache-conv CUDA_CACHE_PATH=$W/cuda-cache-conv
  d=$(mkcg unlimited max)
  t0=$(date +%s.%N)
  bash -c "echo \$\$ > $d/cgroup.procs && exec timeout 60 $K tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 1 -j 16 --no-db" > $W/conv-seed1.txt 2>&1
  t1=$(date +%s.%N)
  P=$(cat $d/memory.peak); sleep 1; rmdir $d
  echo "unlimited: $(secs $t0 $t1) s, cgroup peak $P bytes; kept footprint $(cat $W/cache-conv/cuda/*.mem 2>/dev/null)"
  L=$(( P * 6 / 10 ))
  echo "limit: $L bytes (0.6 of that peak), -j 16"
  for run in 1 2; do
    C=$W/cache-yes-$run; mkdir -p $C/cuda
    cp $W/cache-conv/cuda/*.mem $C/cuda/
    d=$(mkcg yes-$run $L)
    t0=$(date +%s.%N)
    KERNTUNE_CACHE_DIR=$C CUDA_CACHE_PATH=$W/cuda-yes-$run bash -c "echo \$\$ > $d/cgroup.procs && exec timeout 140 $K tune examples/convolution/convolution.toml --backend cuda --strategy random --budget $BUDGET --seed 2 -j 16 --no-db" > $W/mem-yes-$run.txt 2>&1; rc=$?
    t1=$(date +%s.%N)
    echo "kept-yes-$run: exit $rc, $(secs $t0 $t1) s, $(grep oom_kill $d/memory.events | tr '\n' ' '), peak $(cat $d/memory.peak)"
    sleep 1; rmdir $d
    echo "warnings: $(grep -c 'worker died' $W/mem-yes-$run.txt) worker deaths, $(grep -c 'compiler ended' $W/mem-yes-$run.txt) compiler deaths"
    grep -v " WARN " $W/mem-yes-$run.txt | grep -E "memory|compiled again|^winner|^compiled|measured|worker|^error|^time" | cut -c1-900
    save
  done
} 2>&1 | tee $W/log.txt
save
