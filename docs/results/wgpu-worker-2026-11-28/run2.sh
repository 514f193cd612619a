#!/usr/bin/env bash
# The second call (2026-11-28, after c3b0829): the shipped examples/faults/hang.toml through
# Vulkan on the H200, with the worker and in-process (where a tune whose shader never ends now
# ends: the hung queue is left undropped), then the GPU test suites at this build. Same set-up
# as run.sh.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
BIN=$PWD/.device/kerntune
W=/tmp/ww2
mkdir -p "$W"
T="/usr/bin/time -f wall_%e_s"
pack() { tar czf "$OUT/ww2.tgz" -C "$W" .; }
KERNTUNE_LOG=kerntune_core::worker=debug $T "$BIN" tune examples/faults/hang.toml --backend wgpu --no-db > "$W/hang-worker.txt" 2>&1
pack
KERNTUNE_WGPU_ISOLATION=0 $T timeout -s KILL 120 "$BIN" tune examples/faults/hang.toml --backend wgpu --no-db > "$W/hang-inprocess.txt" 2>&1
echo "exit $?" >> "$W/hang-inprocess.txt"
nvidia-smi > "$W/after.txt" 2>&1
pack
bash scripts/gpu-check.sh tests
cp "$OUT/tests.txt" "$W/"
pack
