#!/usr/bin/env bash
# Where a warm SGEMM tune's host time goes: a debug-log timeline and, if present, an nsys profile.
set -u
O=$OUT; W=/tmp/w4; rm -rf $W; mkdir -p $W
ls /usr/local/cuda/bin > $W/cuda-bin.txt; which nsys >> $W/cuda-bin.txt 2>&1
mkdir -p $W/s; SGEMM_WARM=1 OUT=$W/s bash scripts/gpu-check.sh sgemm
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1); export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
rm -f $KERNTUNE_CACHE_DIR/db.sqlite*
KERNTUNE_LOG=kerntune_core=debug,kerntune_cuda=debug,kerntune=debug /usr/bin/time -f "wall %e s" .device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --top 3 --json > $W/warm-debug.json 2> $W/warm-debug.err
NSYS=$(ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
  rm -f $KERNTUNE_CACHE_DIR/db.sqlite*
  $NSYS profile -o $W/warm --trace=cuda,osrt --force-overwrite true .device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --top 3 > $W/nsys.out 2>&1
  $NSYS stats --report cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_trace --format csv --output $W/warm $W/warm.nsys-rep > $W/nsys-stats.out 2>&1
  rm -f $W/warm.nsys-rep $W/warm.sqlite
fi
cd /tmp && tar czf $O/w4.tgz w4
cat $W/cuda-bin.txt | tr '\n' ' '; tail -3 $W/warm-debug.err; ls -la $W
