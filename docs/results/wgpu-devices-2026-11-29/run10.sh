#!/bin/bash
# Call 10: the suites call 9 did not run, at 6885d4f (HEAD): the two-device wgpu test (three
# times), open, launch.
. scripts/device-env.sh; export KERNTUNE_CACHE_DIR=/tmp/kc
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
{ for i in 1 2 3; do echo "--- run $i"; .device/tests/wgpu-devices 2>&1 | grep -E "wgpu devices|panicked|assert" | cut -c1-600; done; } > $OUT/devices-test.txt 2>&1
KERNTUNE_BIN=$PWD/.device/kerntune TESTS=".device/tests/open .device/tests/launch" bash scripts/gpu-check.sh tests > $OUT/tests-run.txt 2>&1
