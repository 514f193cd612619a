#!/bin/bash
# Call 5: CUDA outputs compared on the host are read back into page-locked memory kept for the
# next verification. The triad at N = 2^30 through CUDA with all but 12.5 GiB held by PyTorch
# (y read back and compared on the host), before (kerntune-before: call 4's build) and after,
# alternating; then on the whole GPU; then the GPU suites (gpu, conformance, open, launch).
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
tune() {  # $1 binary
  echo "--- $1"
  KERNTUNE_LOG=kerntune_core=debug,kerntune_cuda=debug /usr/bin/time -f "wall %e s" .device/$1 tune examples/triad/triad.toml --backend cuda --no-db --key N=1073741824 --strategy random --budget 4 --seed 1 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g' | grep -E "page-locked|workspace made|worker initialised|search done|^winner|note:|^wall|error" | sed 's/^2026-11-29T//' | cut -c1-240
}
{
echo "=== 12.5 GiB left free"; ballast 12.5
for r in 1 2; do tune kerntune-before; tune kerntune; done
unballast
echo "=== the whole GPU"; tune kerntune-before; tune kerntune
} > $OUT/pinned.txt 2>&1
KERNTUNE_BIN=$PWD/.device/kerntune TESTS=".device/tests/gpu .device/tests/conformance .device/tests/open .device/tests/launch" bash scripts/gpu-check.sh tests > $OUT/tests-run.txt 2>&1
