#!/usr/bin/env bash
# The fifty-first session's second H200 call, at the build after call 1: (1) the compile
# footprint remembered, with real NVRTC compiles in a tighter memory cgroup than call 1's (three
# convolution footprints and 1 GiB for the tuner and its kernel worker, 16 compile threads):
# the convolution (random 50, seed 2) twice with nothing kept, twice with the footprint of an
# earlier tune (seed 1, unlimited) kept, each on a fresh compile cache, counting out-of-memory
# kills; (2) every GPU suite (call 1's gpu suite counted the kept footprint as a cache binary).
set -u
. scripts/device-env.sh
W=/tmp/s51b; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
K=$PWD/.device/kerntune
TAG=${TAG:-call2}
save() { (cd $W && tar czf $OUT/$TAG.tgz *.txt 2>/dev/null); }
secs() { python3 -c "print(f'{$2-$1:.2f}')"; }
cgroup_run() { # NAME LIMIT_BYTES CMD...: runs CMD in a new memory cgroup, prints its oom kills
  local name=$1 limit=$2; shift 2
  local d v2=1
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then d=/sys/fs/cgroup/kt-$name; else d=/sys/fs/cgroup/memory/kt-$name; v2=0; fi
  if ! mkdir $d 2>/dev/null; then echo "$name: no memory cgroup can be made here ($d)"; return 1; fi
  if [ $v2 = 1 ]; then echo $limit > $d/memory.max && echo 0 > $d/memory.swap.max 2>/dev/null; else echo $limit > $d/memory.limit_in_bytes; fi || { echo "$name: cannot set the limit"; rmdir $d; return 1; }
  local t0=$(date +%s.%N)
  bash -c "echo \$\$ > $d/cgroup.procs && exec \"\$@\"" _ "$@"; local rc=$?
  local t1=$(date +%s.%N)
  if [ $v2 = 1 ]; then echo "$name: exit $rc, $(secs $t0 $t1) s, $(grep oom_kill $d/memory.events | tr '\n' ' '), peak $(cat $d/memory.peak 2>/dev/null)"; else echo "$name: exit $rc, $(secs $t0 $t1) s, $(grep oom_kill $d/memory.oom_control)"; fi
  sleep 1; rmdir $d 2>/dev/null
}
{
  export KERNTUNE_CACHE_DIR=$W/cache-conv CUDA_CACHE_PATH=$W/cuda-cache-conv
  timeout 200 $K tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 1 -j 16 --no-db > $W/conv-seed1.txt 2>&1
  F=$(cat $W/cache-conv/cuda/*.mem 2>/dev/null | head -1)
  echo "kept footprint: $F"
  L=$(( F * 3 + (1 << 30) ))
  echo "limit: $L bytes (three footprints and 1 GiB), -j 16"
  for run in 1 2; do
    for kept in no yes; do
      C=$W/cache-$kept-$run; mkdir -p $C/cuda
      [ $kept = yes ] && cp $W/cache-conv/cuda/*.mem $C/cuda/
      KERNTUNE_CACHE_DIR=$C CUDA_CACHE_PATH=$W/cuda-$kept-$run cgroup_run kept-$kept-$run $L timeout 300 $K tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 2 -j 16 --no-db > $W/mem-$kept-$run.txt 2>&1
      grep -E "^kept-|compile memory|compiled again|^winner|^time:|^compiled" $W/mem-$kept-$run.txt | cut -c1-500
      save
    done
  done
  bash scripts/device-suites.sh $W
} 2>&1 | tee $W/log.txt
save
