#!/usr/bin/env bash
# Third call (four H200s): the example matmul through Vulkan on one, two and four GPUs, at 4096³
# (twice each, alternating) and 8192³ (once each), this session's build; then the GPU suites,
# with wgpu's unit tests (the verification screens, f32 and bits, on the H200).
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/wp3
mkdir -p "$W"
T="/usr/bin/time -f wall_%e_s"
S=examples/matmul/matmul.toml
run() { # name, size, then tune arguments
  local n=$1 m=$2; shift 2
  $T timeout -s KILL 150 "$PWD/.device/kerntune" tune $S --backend wgpu --key M=$m,N=$m,K=$m --no-db --json "$@" > "$W/$n.json" 2> "$W/$n.err"
}
nvidia-smi -L > "$W/smi-L.txt" 2>&1
.device/kerntune devices --backend wgpu > "$W/devices.txt" 2>&1
run warm 4096 --devices all
for i in 1 2; do
  run one-4096-$i 4096 --device 0
  run two-4096-$i 4096 --devices 0,1
  run four-4096-$i 4096 --devices all
done
run one-8192 8192 --device 0
run four-8192 8192 --devices all
tar czf "$OUT/wp3.tgz" -C "$W" .
TESTS=".device/tests/wgpu-lib .device/tests/wgpu-devices .device/tests/gpu .device/tests/conformance" timeout -s KILL 400 bash scripts/gpu-check.sh tests
