#!/bin/bash
# Call 2: a wgpu workspace without a copy of the problem, and host writes with two pieces in
# flight. The triad at 2 x 1020 MiB through Vulkan, before (kerntune-before: call 1's build)
# and after, alternating: on the whole GPU in a worker and in-process (the phases from the
# debug log), then with all but 3.5 GiB held by PyTorch (restores from the host); then wgpu's
# unit tests on the GPU.
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
tune() {  # $1 binary, then environment
  local bin=$1; shift
  echo "--- $bin $*"
  env "$@" KERNTUNE_LOG=kerntune_core=debug,kerntune_wgpu=debug /usr/bin/time -f "wall %e s, max RSS %M KB" .device/$bin tune examples/triad/triad.toml --backend wgpu --no-db --key N=267386880 --strategy random --budget 4 --seed 1 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g' | grep -E "problem written|problem received|workspace made|worker initialised|search done|^winner|note:|^wall|error" | sed 's/^2026-11-29T//' | cut -c1-220
}
{
for r in 1 2; do tune kerntune-before; tune kerntune; done
for r in 1 2; do tune kerntune-before KERNTUNE_WGPU_ISOLATION=0; tune kerntune KERNTUNE_WGPU_ISOLATION=0; done
echo "=== 3.5 GiB left free"; ballast 3.5
for r in 1 2; do tune kerntune-before; tune kerntune; done
unballast
} > $OUT/workspace.txt 2>&1
KERNTUNE_REQUIRE_DEVICE=wgpu .device/tests/wgpu-lib --test-threads=1 > $OUT/wgpu-lib.txt 2>&1; echo "exit $?" >> $OUT/wgpu-lib.txt
