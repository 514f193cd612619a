#!/usr/bin/env bash
# Fifth call (two H200s; four were not lent): where a several-GPU tune's process wall goes
# outside the tuner (1.3–1.7 s with four GPUs in call 3, as much as the measuring at 4096³;
# 0.5–0.6 s with two in calls 1–2). The example matmul at 4096³, wgpu and CUDA, one GPU and all,
# with the CLI's and the tuner's debug lines (timestamps) and the shell's clock before and after
# each process; then the GPU suites at this build.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/wp5
mkdir -p "$W"
S=examples/matmul/matmul.toml
run() { # name, backend, then tune arguments
  local n=$1 b=$2; shift 2
  date +%s.%N > "$W/$n.clock"
  KERNTUNE_LOG=warn,kerntune=debug,kerntune_core::run=debug,kerntune_core::worker=debug,kerntune_wgpu=debug \
    timeout -s KILL 150 "$PWD/.device/kerntune" tune $S --backend "$b" --key M=4096,N=4096,K=4096 --no-db --json "$@" > "$W/$n.json" 2> "$W/$n.err"
  date +%s.%N >> "$W/$n.clock"
}
run warm-wgpu wgpu --devices all
run warm-cuda cuda --devices all
for i in 1 2; do
  run wgpu-one-$i wgpu --device 0
  run wgpu-all-$i wgpu --devices all
  run cuda-one-$i cuda --device 0
  run cuda-all-$i cuda --devices all
done
tar czf "$OUT/wp5.tgz" -C "$W" .
TESTS=".device/tests/wgpu-lib .device/tests/conformance .device/tests/gpu" timeout -s KILL 300 bash scripts/gpu-check.sh tests
