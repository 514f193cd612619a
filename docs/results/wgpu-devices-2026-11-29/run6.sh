#!/bin/bash
# Call 6: every GPU suite at the session's last code (HEAD 1395ec6), the two-device wgpu test
# five more times (what the second device kept and what the first re-measured), and the
# listing with the adapters' memory.
. scripts/device-env.sh; export KERNTUNE_CACHE_DIR=/tmp/kc
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
{ .device/kerntune devices --backend wgpu; .device/kerntune devices --backend cuda; } 2>&1 | grep -E "^\[|global_mem" > $OUT/devices.txt
{ for i in 1 2 3 4 5; do echo "--- run $i"; .device/tests/wgpu-devices 2>&1 | grep -E "wgpu devices|panicked|assert" | cut -c1-600; done; } > $OUT/devices-test.txt 2>&1
KERNTUNE_BIN=$PWD/.device/kerntune TESTS=".device/tests/conformance .device/tests/gpu .device/tests/wgpu-lib .device/tests/wgpu-devices .device/tests/open .device/tests/launch" bash scripts/gpu-check.sh tests > $OUT/tests-run.txt 2>&1
