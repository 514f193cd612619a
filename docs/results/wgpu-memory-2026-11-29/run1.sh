#!/bin/bash
# wgpu (NVIDIA's Vulkan driver) on an H200 whose memory another process (PyTorch) holds: the
# triad at N = 255 Mi (two 1020 MiB buffers), the build before this change (old) and after (new),
# then the GPU suite's two fits-once tests and wgpu's unit tests on the GPU.
. scripts/device-env.sh; export KERNTUNE_CACHE_DIR=/tmp/kc
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
N=267386880
ARGS="tune examples/triad/triad.toml --backend wgpu --no-db --key N=$N --strategy random --budget 4 --seed 1"
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
tune() {  # $1 = old|new, the rest: environment
  local b=$1; shift
  echo "--- $b $*"
  env "$@" /usr/bin/time -f "wall %e s" .device/$b-kerntune $ARGS 2>&1 | grep -v "^\s*$" | cut -c1-600 | tail -25
}
{
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader
echo "=== whole GPU"
tune old; tune new
echo "=== 3.5 GiB free (the two buffers and 1.5 GiB)"
ballast 3.5; tune old; tune new KERNTUNE_LOG=kerntune_wgpu=debug; tune new KERNTUNE_WGPU_ISOLATION=0; unballast
echo "=== 1.5 GiB free"
ballast 1.5; tune old; tune new; unballast
} > $OUT/tunes.txt 2>&1
KERNTUNE_BIN=$PWD/.device/new-kerntune KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/gpu fits_the_gpu_only_once --test-threads=1 --nocapture > $OUT/gpu-tests.txt 2>&1; echo "exit $?" >> $OUT/gpu-tests.txt
KERNTUNE_REQUIRE_DEVICE=wgpu .device/tests/wgpu-lib --test-threads=1 > $OUT/wgpu-lib.txt 2>&1; echo "exit $?" >> $OUT/wgpu-lib.txt
KERNTUNE_BIN=$PWD/.device/new-kerntune KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/conformance --test-threads=1 > $OUT/conformance.txt 2>&1; echo "exit $?" >> $OUT/conformance.txt
