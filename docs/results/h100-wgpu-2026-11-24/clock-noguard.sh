#!/usr/bin/env bash
set -u
for f in .gl/*.deb; do dpkg -x "$f" / ; done; ldconfig
export KERNTUNE_CACHE_DIR=/tmp/ktc
B=.device/kerntune
mkdir -p $OUT/r; OUT0=$OUT; OUT=$OUT/r
$B devices --backend wgpu > $OUT/devices.txt 2>&1 || export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -q -d PERFORMANCE,CLOCK > $OUT/smi-before.txt
K="--key M=2048,N=2048,K=2048 --no-db --backend wgpu"
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,utilization.gpu,power.draw,clocks_event_reasons.active --format=csv -lms 100 > $OUT/smi-full.csv &
P=$!
$B tune .device/mm/unchecked.toml $K --json > $OUT/full.json 2>&1
kill $P
sleep 1
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,utilization.gpu,power.draw,clocks_event_reasons.active --format=csv -lms 100 > $OUT/smi-cuda.csv &
P=$!
$B tune .device/mm/unchecked.toml --key M=2048,N=2048,K=2048 --no-db --backend cuda --json > $OUT/full-cuda.json 2>&1
kill $P
cd $OUT0 && tar czf r.tgz r && rm -rf r
