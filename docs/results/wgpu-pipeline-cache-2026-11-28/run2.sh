#!/usr/bin/env bash
# Second call (two H200s): the example matmul at 4096³ (each launch about 8× longer than at
# 2048³), one GPU and two, kerntune-old (920a2a6) against kerntune (pipeline cache data shipped
# to the workers), alternating, each binary's first run left out; one cold run of each at
# 2048³ with an empty driver cache; then the GPU suites (conformance, gpu, wgpu-devices).
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/wp2
mkdir -p "$W"
T="/usr/bin/time -f wall_%e_s"
S=examples/matmul/matmul.toml
run() { # name, binary, size, then tune arguments
  local n=$1 b=$2 m=$3; shift 3
  $T timeout -s KILL 100 "$PWD/.device/$b" tune $S --backend wgpu --key M=$m,N=$m,K=$m --no-db --json "$@" > "$W/$n.json" 2> "$W/$n.err"
}
for b in kerntune-old kerntune; do
  __GL_SHADER_DISK_CACHE_PATH=/tmp/nvcold-$b run $b-cold-2048 $b 2048 --device 0
done
run warm-old kerntune-old 4096 --devices all
run warm-new kerntune 4096 --devices all
for i in 1 2; do
  run old-one-$i kerntune-old 4096 --device 0
  run new-one-$i kerntune 4096 --device 0
  run old-all-$i kerntune-old 4096 --devices all
  run new-all-$i kerntune 4096 --devices all
done
tar czf "$OUT/wp2.tgz" -C "$W" .
TESTS=".device/tests/conformance .device/tests/gpu .device/tests/wgpu-devices" timeout -s KILL 420 bash scripts/gpu-check.sh tests
