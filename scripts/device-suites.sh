#!/usr/bin/env bash
# Every GPU test suite that `scripts/gpu-check.sh --prepare` packed, one after the other, on the
# GPU machine (after `. scripts/device-env.sh`), for a run script under docs/results: writes
# DIR/suite-NAME.txt for each and prints one line per suite (its exit status) with its result
# and failure lines. A suite that skips for want of a device fails (KERNTUNE_REQUIRE_DEVICE).
#
#   bash scripts/device-suites.sh DIR [KERNTUNE_BINARY]
set -u
W=${1:?usage: device-suites.sh DIR [KERNTUNE_BINARY]}
BIN=${2:-$PWD/.device/kerntune}
mkdir -p "$W"
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export KERNTUNE_CACHE_DIR=$W/suites KERNTUNE_BIN=$BIN KERNTUNE_REQUIRE_DEVICE=cuda,wgpu
for t in gpu conformance wgpu-lib open launch; do
  timeout 240 .device/tests/$t --test-threads=1 > "$W/suite-$t.txt" 2>&1
  echo "$t: exit $?"
  grep -E "^test result|FAILED|panicked" "$W/suite-$t.txt" | sed "s/^/$t: /" | cut -c1-1500
done
timeout 100 .device/tests/wgpu-devices > "$W/wgpu-devices.txt" 2>&1
echo "wgpu-devices: exit $?"
