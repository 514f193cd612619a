#!/bin/bash
# Call 2: the screen's error scope on the GPU (wgpu's unit tests), and why the Vulkan triad at
# 2 x 1020 MiB timed 2.33-2.46 ms on an empty H200 but 0.90 ms with 136 GiB held by PyTorch
# (call 1): the same tune at several sizes and amounts of memory held, through Vulkan and CUDA.
. scripts/device-env.sh; export KERNTUNE_CACHE_DIR=/tmp/kc
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
ballast() {  # holds all but $1 GiB of the GPU's free memory until unballast
  rm -f /tmp/ballast.ready /tmp/ballast.stop
  python3 - "$1" <<'PY' &
import sys, time, os, torch
leave = int(float(sys.argv[1]) * 2**30)
free, total = torch.cuda.mem_get_info()
x = torch.empty(free - leave, dtype=torch.uint8, device="cuda")
print(f"ballast: {free/2**30:.2f} GiB free of {total/2**30:.2f}; holding {(free-leave)/2**30:.2f}, leaving {leave/2**30:.2f}", flush=True)
open("/tmp/ballast.ready", "w").write("ok")
while not os.path.exists("/tmp/ballast.stop"):
    time.sleep(0.2)
PY
  for i in $(seq 1 300); do [ -f /tmp/ballast.ready ] && break; sleep 0.2; done
}
unballast() { touch /tmp/ballast.stop; wait; sleep 1; }
tune() {  # $1 backend, $2 N
  echo "--- $1 N=$2"
  .device/kerntune tune examples/triad/triad.toml --backend $1 --no-db --key N=$2 --strategy random --budget 4 --seed 1 2>&1 | grep -E "^winner|^│ [0-9]|note:|error" | cut -c1-200
}
KERNTUNE_REQUIRE_DEVICE=wgpu .device/tests/wgpu-lib --test-threads=1 > $OUT/wgpu-lib.txt 2>&1; echo "exit $?" >> $OUT/wgpu-lib.txt
{
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader
echo "=== empty GPU"
for n in 16777216 67108864 267386880; do tune wgpu $n; done; tune cuda 267386880
for leave in 100 40 10 3.5; do
  echo "=== $leave GiB left free"; ballast $leave; tune wgpu 267386880; tune cuda 267386880; unballast
done
echo "=== empty GPU again"; tune wgpu 267386880
echo "=== another process holding 1 GiB"; ballast 138; tune wgpu 267386880; unballast
} > $OUT/sizes.txt 2>&1
