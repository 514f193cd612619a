#!/usr/bin/env bash
# The fifty-first session's third H200 call, at the build that counts a compiler's own memory
# (peak resident less the file pages it maps). (1) What an NVRTC compiler process of the
# convolution holds, sampled every 0.2 s while a tune (random 50, seed 1, -j 16) runs in an
# unlimited memory cgroup: its peak VmHWM, RssAnon and RssFile, and the cgroup's peak (P); the
# footprint the tune keeps. (2) The same tune with seed 2 in a cgroup limited to 0.6 P, twice
# with nothing kept and twice with the kept footprint, each on a fresh compile cache, counting
# out-of-memory kills. (3) The gpu suite.
set -u
. scripts/device-env.sh
W=/tmp/s51c; rm -rf $W; mkdir -p $W
K=$PWD/.device/kerntune
TAG=${TAG:-call3}
save() { (cd $W && tar czf $OUT/$TAG.tgz *.txt 2>/dev/null); }
secs() { python3 -c "print(f'{$2-$1:.2f}')"; }
mkcg() { # NAME LIMIT -> prints the folder
  local d=/sys/fs/cgroup/kt-$1; mkdir $d || return 1; echo $2 > $d/memory.max; echo 0 > $d/memory.swap.max 2>/dev/null; echo $d; }
sample() { # samples every compiler process's status until $W/stop exists
  python3 - "$W" <<'PY'
import os, sys, time, collections
w = sys.argv[1]; peak = collections.defaultdict(lambda: [0, 0, 0])
def kb(t, k):
    for l in t.splitlines():
        if l.startswith(k): return int(l.split()[1])
    return 0
while not os.path.exists(w + "/stop"):
    for p in os.listdir("/proc"):
        if not p.isdigit(): continue
        try:
            env = open(f"/proc/{p}/environ", "rb").read()
            if b"KERNTUNE_CUDA_COMPILER=1" not in env: continue
            t = open(f"/proc/{p}/status").read()
        except OSError: continue
        v = peak[p]; v[0] = max(v[0], kb(t, "VmHWM:")); v[1] = max(v[1], kb(t, "RssAnon:")); v[2] = max(v[2], kb(t, "RssFile:"))
    time.sleep(0.2)
vals = list(peak.values())
if vals:
    print(f"compiler processes sampled: {len(vals)}; per process, the largest VmHWM {max(v[0] for v in vals)/1024:.0f} MiB, RssAnon {max(v[1] for v in vals)/1024:.0f} MiB, RssFile {max(v[2] for v in vals)/1024:.0f} MiB; mean VmHWM {sum(v[0] for v in vals)/len(vals)/1024:.0f} MiB, RssAnon {sum(v[1] for v in vals)/len(vals)/1024:.0f} MiB")
PY
}
{
  export KERNTUNE_CACHE_DIR=$W/cache-conv CUDA_CACHE_PATH=$W/cuda-cache-conv
  d=$(mkcg unlimited max)
  ( sample > $W/sampled.txt ) & S=$!
  t0=$(date +%s.%N)
  bash -c "echo \$\$ > $d/cgroup.procs && exec timeout 200 $K tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 1 -j 16 --no-db" > $W/conv-seed1.txt 2>&1
  t1=$(date +%s.%N); touch $W/stop; wait $S
  P=$(cat $d/memory.peak); sleep 1; rmdir $d
  cat $W/sampled.txt
  echo "unlimited: $(secs $t0 $t1) s, cgroup peak $P bytes; kept footprint $(cat $W/cache-conv/cuda/*.mem 2>/dev/null)"
  L=$(( P * 6 / 10 ))
  echo "limit: $L bytes (0.6 of that peak), -j 16"
  for run in 1 2; do
    for kept in no yes; do
      C=$W/cache-$kept-$run; mkdir -p $C/cuda
      [ $kept = yes ] && cp $W/cache-conv/cuda/*.mem $C/cuda/
      d=$(mkcg $kept-$run $L)
      t0=$(date +%s.%N)
      KERNTUNE_CACHE_DIR=$C CUDA_CACHE_PATH=$W/cuda-$kept-$run bash -c "echo \$\$ > $d/cgroup.procs && exec timeout 200 $K tune examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 2 -j 16 --no-db" > $W/mem-$kept-$run.txt 2>&1; rc=$?
      t1=$(date +%s.%N)
      echo "kept-$kept-$run: exit $rc, $(secs $t0 $t1) s, $(grep oom_kill $d/memory.events | tr '\n' ' '), peak $(cat $d/memory.peak)"
      sleep 1; rmdir $d
      grep -E "compile memory|compiled again|^winner|^compiled|measured" $W/mem-$kept-$run.txt | cut -c1-400
      save
    done
  done
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json KERNTUNE_CACHE_DIR=$W/suites KERNTUNE_BIN=$K KERNTUNE_REQUIRE_DEVICE=cuda,wgpu
  timeout 150 .device/tests/gpu --test-threads=1 > $W/suite-gpu.txt 2>&1; echo "gpu: exit $?"; grep -E "^test result|FAILED|panicked" $W/suite-gpu.txt
} 2>&1 | tee $W/log.txt
save
