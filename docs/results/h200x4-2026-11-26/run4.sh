#!/usr/bin/env bash
# On a 64-core node: do 64 concurrent NVRTC compiles slow each other inside one process (threads)
# more than in 64 processes, and does the machine slow plain CPU work at 64 at all? The bench
# program backend-cuda/examples/compile_scaling (built here, carried in .pack/) on SGEMM (200
# configs: one at a time, then 16 and 64 threads and processes, twice at 64) and on the
# convolution (64 configs, 64 threads and processes, twice); then an ALU-only job (awk loop)
# alone, 16 at once and 64 at once.
set -u
O=$OUT
. scripts/device-env.sh
W=/tmp/x4d; rm -rf $W; mkdir -p $W
export CUDA_CACHE_DISABLE=1
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
C=.pack/compile_scaling
{
  /usr/bin/time -f "wall %e s" $C benches/sgemm/sgemm.toml 200 1 sm_90 serial t16 p16 t64 p64 t64 p64
  /usr/bin/time -f "wall %e s" $C examples/convolution/convolution.toml 64 1 sm_90 t64 p64 t64 p64
} > $W/scaling.txt 2>&1
alu() { /usr/bin/time -f "%e" awk 'BEGIN{for(i=0;i<40000000;i++)s+=i*i%7}' 2>&1 >/dev/null; }
{
  echo "alone: $(alu)"
  for n in 16 64; do
    for k in $(seq $n); do alu > $W/alu-$n-$k.txt & done; wait
    echo "$n at once: $(cat $W/alu-$n-*.txt | sort -n | awk '{a[NR]=$1} END{print "min", a[1], "median", a[int(NR/2)+1], "max", a[NR]}')"
  done
} > $W/alu.txt 2>&1
cat $W/scaling.txt $W/alu.txt
cd /tmp && tar czf $O/x4d.tgz x4d
