#!/usr/bin/env bash
# Every GPU suite at the session's final build (47cf93d: the device served before the strategy
# is asked, and simulate's time budgets): `bash scripts/gpu-check.sh --prepare`, `tar cJf
# .pack/device.tar.xz .device`; carry .pack and .gl. The suites' logs come back packed.
set -u
rm -rf .device; tar xJf .pack/device.tar.xz
. scripts/device-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/suites.txt
bash scripts/device-suites.sh /tmp/suites >> $OUT/suites.txt 2>&1
(cd /tmp && tar czf $OUT/suites.tgz suites/suite-*.txt suites/wgpu-devices.txt)
cat $OUT/suites.txt
