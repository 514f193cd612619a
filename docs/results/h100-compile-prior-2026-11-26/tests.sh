#!/usr/bin/env bash
# The GPU test binaries (conformance, gpu, launch, open) at this session's final code, through
# gpu-check.sh (which sources scripts/device-env.sh).
set -u
O=$OUT
. scripts/device-env.sh
W=/tmp/t; rm -rf $W; mkdir -p $W
OUT=$W timeout 400 bash scripts/gpu-check.sh tests > $W/check.log 2>&1; echo "gpu-check tests: exit $?"
grep -E '^---|test result|FAILED|panicked|^exit|^wall' $W/tests.txt
cd /tmp && tar czf $O/t.tgz t
