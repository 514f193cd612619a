#!/usr/bin/env bash
# Every GPU check in one go, on the GPU machine (see ../shared/device/README.md).
# The binaries are built here (`cargo build --release`) and shipped in .device/ (ignored by git);
# the Vulkan loader .debs come in .gl/. Results go to $OUT (files, for the caller to read).
# Usage on the device machine: bash scripts/gpu-check.sh
set -u
OUT=${OUT:-/tmp/kerntune-gpu}
mkdir -p "$OUT"
BIN=${KERNTUNE_BIN:-.device/kerntune}
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
rm -rf "$KERNTUNE_CACHE_DIR"
if ! ldconfig -p | grep -q libvulkan.so.1 && ls .gl/*.deb >/dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; } > "$OUT/gpu.txt" 2>&1
if ! "$BIN" devices --backend wgpu > "$OUT/devices.txt" 2>&1; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  "$BIN" devices --backend wgpu > "$OUT/devices.txt" 2>&1
fi
# The triad at 2^24 elements (64 MiB per buffer, larger than L2) and the matmul at 2048^3.
{
  /usr/bin/time -f "wall %e s" "$BIN" tune examples/triad/triad.toml --backend wgpu --key N=16777216 --top 8
  /usr/bin/time -f "wall %e s" "$BIN" tune examples/matmul/matmul.toml --backend wgpu --key M=2048,N=2048,K=2048 --top 8
} > "$OUT/wgpu-tune.txt" 2>&1
cp "$KERNTUNE_CACHE_DIR/db.json" "$OUT/db.json" 2>/dev/null
# The device's copy bandwidth (read + write bytes per second), for the triad's GB/s to compare with.
python3 - > "$OUT/copy.txt" 2>&1 <<'PY'
import torch
n = 1 << 28
a = torch.empty(n, dtype=torch.float32, device="cuda"); b = torch.empty_like(a)
for _ in range(3): b.copy_(a)
torch.cuda.synchronize()
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
best = 1e9
for _ in range(20):
    s.record(); b.copy_(a); e.record(); torch.cuda.synchronize()
    best = min(best, s.elapsed_time(e) / 1e3)
print(f"copy bandwidth: {2 * 4 * n / best / 1e9:.1f} GB/s (2^28 floats, best of 20, torch)")
PY
ls -la "$OUT"
