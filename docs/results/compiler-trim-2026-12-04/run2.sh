#!/usr/bin/env bash
# The fifty-third session's second H200 call: where a tune's memory goes, process by process
# (sample.py beside this script, every 0.2 s), with the build that also counts a compiler's
# footprint less the most file pages it was seen to map. The convolution as in run.sh:
#  old and new, unlimited (seed 1): each kind's own memory, idle compilers' included;
#  new in a cgroup of LIMIT bytes (default 657960960: 0.6 of the old binary's unlimited peak in
#  call 1), seed 2, `--budget 50,120s`, with the memory check and without
#  (KERNTUNE_COMPILE_MEMORY_CHECK=0). RUNS picks some of: old-unlimited new-unlimited
#  new-limited new-limited2 new-nocheck suites (the GPU test suites, scripts/device-suites.sh).
# Call 3 (TAG=call3 RUNS="new-unlimited new-limited new-limited2 suites"): the build that also
# closes idle compiler processes while compile starts are held for memory. Call 4 (the same
# RUNS): the build whose memory check went by nine in ten of the tune's compile peaks, each read
# from VmHWM after a reset through /proc/self/clear_refs (replaced, after this call, by reading
# each compile's memory as it runs).
set -u
. scripts/device-env.sh
W=/tmp/s53; rm -rf $W; mkdir -p $W
NEW=$PWD/.device/kerntune OLD=$PWD/.device/kerntune-old
HERE=$(dirname $0)
TAG=${TAG:-call2}
L=${LIMIT:-657960960}
save() { (cd $W && tar czf $OUT/$TAG.tgz *.txt 2>/dev/null); }
secs() { python3 -c "print(f'{$2-$1:.2f}')"; }
mkcg() { local d=/sys/fs/cgroup/kt-$1; mkdir $d || return 1; echo $2 > $d/memory.max; echo 0 > $d/memory.swap.max 2>/dev/null; echo $d; }
tune() {
  local name=$1 bin=$2 lim=$3 seed=$4 budget=$5 to=$6; shift 6
  local d; d=$(mkcg $name $lim) || return
  local t0 t1 rc
  t0=$(date +%s.%N)
  env "$@" KERNTUNE_CACHE_DIR=$W/cache-$name CUDA_CACHE_PATH=$W/cuda-$name bash -c "echo \$\$ > $d/cgroup.procs && exec timeout $to $bin tune examples/convolution/convolution.toml --backend cuda --strategy random --budget $budget --seed $seed -j 16 --no-db" > $W/$name.txt 2>&1 &
  local tp=$!
  python3 $HERE/sample.py $d $W/$name-memory.txt &
  local sp=$!
  wait $tp; rc=$?
  t1=$(date +%s.%N)
  wait $sp
  PEAK=$(cat $d/memory.peak)
  echo "$name: exit $rc, $(secs $t0 $t1) s, $(grep oom_kill $d/memory.events | tr '\n' ' '), peak $PEAK bytes ($(( PEAK >> 20 )) MiB); $(grep -c 'worker died' $W/$name.txt) worker deaths, $(grep -c 'compiler ended' $W/$name.txt) compiler deaths"
  grep -v " WARN " $W/$name.txt | grep -E "^winner|^compiled|^time|compile memory|^error" | cut -c1-700
  head -3 $W/$name-memory.txt
  sleep 1; rmdir $d
}
seedmem() { mkdir -p $W/cache-$1/cuda; cp $W/cache-$2/cuda/*.mem $W/cache-$1/cuda/ 2>/dev/null; }
{
  for r in ${RUNS:-old-unlimited new-unlimited new-limited new-nocheck}; do
    case $r in
      old-unlimited) tune $r $OLD max 1 50 120 ;;
      new-unlimited) tune $r $NEW max 1 50 120 ;;
      new-limited|new-limited2) seedmem $r new-unlimited; tune $r $NEW $L 2 50,120s 135 ;;
      suites) bash scripts/device-suites.sh $W ;;
      new-nocheck) seedmem $r new-unlimited; tune $r $NEW $L 2 50,120s 135 KERNTUNE_COMPILE_MEMORY_CHECK=0 ;;
    esac
    save
  done
} 2>&1 | tee $W/log.txt
save
