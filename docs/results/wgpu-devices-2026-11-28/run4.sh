#!/usr/bin/env bash
# The fourth call (two H200s): outputs poisoned, restored and compared on the device (kerntune)
# against reading back only the compared outputs (kerntune-old, 9eb5aea), one GPU and two,
# alternating; then the GPU suites that tune through wgpu (conformance, gpu).
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/wd4
mkdir -p "$W"
pack() { tar czf "$OUT/wd4.tgz" -C "$W" .; }
T="/usr/bin/time -f wall_%e_s"
S=examples/matmul/matmul.toml
run() { # name, binary, then tune arguments
  local n=$1 b=$2; shift 2
  $T timeout -s KILL 120 "$PWD/.device/$b" tune $S --backend wgpu --key M=2048,N=2048,K=2048 --no-db --json "$@" > "$W/$n.json" 2> "$W/$n.err"
}
run warm kerntune --device 0
run warm1 kerntune --device 1
for i in 1 2; do
  run old-one-$i kerntune-old --device 0
  run new-one-$i kerntune --device 0
  run old-all-$i kerntune-old --devices all
  run new-all-$i kerntune --devices all
done
KERNTUNE_LOG=warn,kerntune_core::run::device=trace,kerntune_core::worker=trace run new-all-trace kerntune --devices all
pack
TESTS=".device/tests/conformance .device/tests/gpu" bash scripts/gpu-check.sh tests
cp "$OUT/tests.txt" "$W/"
pack
