#!/usr/bin/env bash
# Cross-process fidelity: is one tune's mean of a config inside another, separate tune's reported
# 95 % interval for it? SGEMM 410 (4096³) and the triad at 2^28, warm (the compile cache filled
# first) and cold, the CUDA backend reading each kernel's resources from its CUBIN (the default)
# against asking the driver, which loads every compiled module into the tuner's own context
# (KERNTUNE_CUDA_USAGE=driver, how every tune read them before 2026-11-25), interleaved.
# Run from the repository root on the GPU machine:
#   tar xJf .pack/device.tar.xz && bash docs/results/cross-process-2026-11-27/run.sh
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
W=/tmp/xp
mkdir -p "$W"
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv,noheader > "$W/gpu.txt" 2>&1
nproc >> "$W/gpu.txt"
T="/usr/bin/time -f wall_%e_s"
pack() { tar czf "$OUT/runs.tgz" -C "$W" .; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > "$W/smi.csv" 2>&1 &
SMI=$!
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
SG=benches/sgemm/sgemm.toml
TR=examples/triad/triad.toml
# Fill kerntune's compile cache (and the driver's) once.
$T $BIN tune $SG --backend cuda --no-db --json > "$W/fill.json" 2> "$W/fill.err"
$T $BIN tune $TR --backend cuda --key N=268435456 --no-db --json > "$W/fill-triad.json" 2> "$W/fill-triad.err"
for i in 1 2 3 4; do
  echo "sgemm $i $(date +%T)" >> "$W/order.txt"
  $T $BIN tune $SG --backend cuda --no-db --recheck 20 --json > "$W/sgemm-cubin-$i.json" 2> "$W/sgemm-cubin-$i.err"
  KERNTUNE_CUDA_USAGE=driver $T $BIN tune $SG --backend cuda --no-db --recheck 20 --json > "$W/sgemm-driver-$i.json" 2> "$W/sgemm-driver-$i.err"
  pack
done
for i in 1 2 3; do
  echo "triad $i $(date +%T)" >> "$W/order.txt"
  $T $BIN tune $TR --backend cuda --key N=268435456 --no-db --recheck 20 --json > "$W/triad-cubin-$i.json" 2> "$W/triad-cubin-$i.err"
  KERNTUNE_CUDA_USAGE=driver $T $BIN tune $TR --backend cuda --key N=268435456 --no-db --recheck 20 --json > "$W/triad-driver-$i.json" 2> "$W/triad-driver-$i.err"
  pack
done
# Cold: both compile caches emptied before each run.
for i in 1 2 3; do
  echo "cold $i $(date +%T)" >> "$W/order.txt"
  rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d)
  $T $BIN tune $SG --backend cuda --no-db --recheck 20 --json > "$W/sgemm-cold-cubin-$i.json" 2> "$W/sgemm-cold-cubin-$i.err"
  rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d)
  KERNTUNE_CUDA_USAGE=driver $T $BIN tune $SG --backend cuda --no-db --recheck 20 --json > "$W/sgemm-cold-driver-$i.json" 2> "$W/sgemm-cold-driver-$i.err"
  pack
done
kill $SMI
pack
