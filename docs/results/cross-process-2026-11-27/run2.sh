#!/usr/bin/env bash
# The same question as run.sh for a compile-heavy kernel: the convolution
# (examples/convolution/convolution.toml), random 50 with seed 1 (the same 50 configs in every
# tune), cold (both compile caches emptied before each), alternating the usage from the CUBIN
# with KERNTUNE_CUDA_USAGE=driver, three tunes each. Run from the repository root on the GPU
# machine: tar xJf .pack/device.tar.xz && bash docs/results/cross-process-2026-11-27/run2.sh
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
W=/tmp/xp
mkdir -p "$W"
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv,noheader > "$W/gpu.txt" 2>&1
nproc >> "$W/gpu.txt"
T="/usr/bin/time -f wall_%e_s"
pack() { tar czf "$OUT/runs2.tgz" -C "$W" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > "$W/smi.csv" 2>&1 &
SMI=$!
CONV=examples/convolution/convolution.toml
for i in 1 2 3; do
  echo "conv $i $(date +%T)" >> "$W/order.txt"
  rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d)
  $T $BIN tune $CONV --backend cuda --strategy random --budget 50 --seed 1 --no-db --recheck 20 --json > "$W/conv-cold-cubin-$i.json" 2> "$W/conv-cold-cubin-$i.err"
  rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d)
  KERNTUNE_CUDA_USAGE=driver $T $BIN tune $CONV --backend cuda --strategy random --budget 50 --seed 1 --no-db --recheck 20 --json > "$W/conv-cold-driver-$i.json" 2> "$W/conv-cold-driver-$i.err"
  pack
done
kill $SMI
pack
