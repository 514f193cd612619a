#!/usr/bin/env bash
set -u
for f in .gl/*.deb; do dpkg -x "$f" / ; done; ldconfig
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* /usr/local/cuda/lib64/libnvrtc.so.* 2>/dev/null | grep -v alt | head -1)
mkdir -p /tmp/kt-lib && ln -sf "$lib" /tmp/kt-lib/libnvrtc.so
export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname "$lib"):${LD_LIBRARY_PATH:-}
export KERNTUNE_CACHE_DIR=/tmp/ktc
B=.device/kerntune
mkdir -p $OUT/r; OUT0=$OUT; OUT=$OUT/r
$B devices --backend wgpu > $OUT/devices.txt 2>&1 || export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
K="--key M=2048,N=2048,K=2048 --no-db --backend wgpu"
smi() { nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,utilization.gpu,power.draw,clocks_event_reasons.active --format=csv -lms 100 > $OUT/smi-$1.csv & P=$!; }
smi a; /usr/bin/time -f "wall %e s" $B tune .device/mm/unchecked.toml $K --json > $OUT/full-a.json 2> $OUT/full-a.err; kill $P
sleep 5
smi b; /usr/bin/time -f "wall %e s" $B tune .device/mm/unchecked.toml $K --json > $OUT/full-b.json 2> $OUT/full-b.err; kill $P
sleep 5
$B tune .device/mm/unchecked.toml $K --strategy random --budget 40 --seed 1 --json > $OUT/rand40.json 2>&1
$B tune .device/mm/unchecked.toml $K --top 8 > $OUT/full-c.txt 2>&1
KERNTUNE_WGPU_CLOCK_GUARD=off $B tune .device/mm/unchecked.toml $K --top 8 > $OUT/full-noguard.txt 2>&1
$B tune .device/mm/checked.toml $K --top 5 > $OUT/full-checked.txt 2>&1
$B tune examples/triad/triad.toml --backend wgpu --key N=16777216 --no-db --top 5 > $OUT/triad.txt 2>&1
/usr/bin/time -f "wall %e s" $B tune .device/mm/unchecked.toml --key M=2048,N=2048,K=2048 --no-db --backend cuda --top 8 > $OUT/full-cuda.txt 2>&1
cd $OUT0 && tar czf r.tgz r && rm -rf r
