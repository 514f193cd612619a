#!/usr/bin/env bash
# The second call (two H200s): where the second device's time goes in a wgpu tune over both
# (device and worker traces; each device alone for comparison), where a tune waits after a wgpu
# worker is killed with a shader that never ends (trace), the in-process tune of such a shader
# with the new exit (no exit handlers after a launch that never ended), and the gpu suite with
# its several-GPU tests one at a time.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
BIN=$PWD/.device/kerntune
W=/tmp/wd2
mkdir -p "$W"
pack() { tar czf "$OUT/wd2.tgz" -C "$W" .; }
T="/usr/bin/time -f wall_%e_s"
S=examples/matmul/matmul.toml
run() { # name, then tune arguments
  local n=$1; shift
  $T timeout -s KILL 120 "$BIN" tune $S --backend wgpu --key M=2048,N=2048,K=2048 --no-db --json "$@" > "$W/$n.json" 2> "$W/$n.err"
}
run warm0 --device 0
run warm1 --device 1
run one0 --device 0
run one1 --device 1
KERNTUNE_LOG=warn,kerntune_core::run::device=trace,kerntune_core::worker=trace run all-trace --devices all
run all --devices all
run one1b --device 1
run one0b --device 0
pack
KERNTUNE_LOG=warn,kerntune_core=trace $T timeout -s KILL 60 "$BIN" tune examples/faults/hang.toml --backend wgpu --no-db > "$W/hang-worker.txt" 2>&1
pack
KERNTUNE_WGPU_ISOLATION=0 KERNTUNE_LOG=warn,kerntune=debug $T timeout -s KILL 60 "$BIN" tune examples/faults/hang.toml --backend wgpu --no-db > "$W/inproc.txt" 2>&1
echo "exit $?" >> "$W/inproc.txt"
pack
TESTS=.device/tests/gpu bash scripts/gpu-check.sh tests
cp "$OUT/tests.txt" "$W/"
pack
