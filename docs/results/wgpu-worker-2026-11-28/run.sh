#!/usr/bin/env bash
# The wgpu backend's worker process on a GPU (2026-11-28, twenty-third session), through Vulkan on
# the NVIDIA driver: a kernel whose HANG = 1 configs never end, tuned with kernels in a worker
# (the default) and in-process (KERNTUNE_WGPU_ISOLATION=0, bounded by `timeout`); the shipped
# matmul at 2048³, random 40 (seed 1), worker and in-process alternating, twice; the GPU test
# suites and gpu-check's wgpu tunes. Run on the GPU machine from the repository root with .pack/
# and .gl/ carried (binaries: `cargo build --release --features cuda -p kerntune && bash
# scripts/gpu-check.sh --prepare`, packed into .pack/device.tar.xz).
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
BIN=$PWD/.device/kerntune
D=docs/results/wgpu-worker-2026-11-28
W=/tmp/ww
mkdir -p "$W"
T="/usr/bin/time -f wall_%e_s"
pack() { tar czf "$OUT/ww.tgz" -C "$W" .; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$W/gpu.txt" 2>&1
nproc >> "$W/gpu.txt"
"$BIN" devices --backend wgpu > "$W/devices.txt" 2>&1
$T "$BIN" tune $D/hang.toml --backend wgpu --no-db --json > "$W/hang-worker.json" 2> "$W/hang-worker.err"
$T "$BIN" tune $D/hang.toml --backend wgpu --no-db > "$W/hang-worker.txt" 2>&1
pack
for i in 1 2; do
  for iso in 1 0; do
    KERNTUNE_WGPU_ISOLATION=$iso $T "$BIN" tune examples/matmul/matmul.toml --backend wgpu --key M=2048,N=2048,K=2048 --strategy random --budget 40 --seed 1 --no-db --json > "$W/matmul-iso$iso-$i.json" 2> "$W/matmul-iso$iso-$i.err"
  done
done
pack
bash scripts/gpu-check.sh tests wgpu
cp "$OUT/tests.txt" "$OUT/wgpu-tune.txt" "$W/"
pack
# As recorded: SIGTERM, which the hung in-process tune did not end at within the call (use `timeout -s KILL`).
KERNTUNE_WGPU_ISOLATION=0 $T timeout 90 "$BIN" tune $D/hang.toml --backend wgpu --no-db > "$W/hang-inprocess.txt" 2>&1
echo "exit $?" >> "$W/hang-inprocess.txt"
nvidia-smi > "$W/after.txt" 2>&1
pack
