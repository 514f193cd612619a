#!/usr/bin/env bash
# Second call, on an H200, at the session's last code (dec63e4: a crashed compiler's config
# compiled again at once, not alone): every GPU suite.
set -u
. scripts/device-env.sh
W=/tmp/retry2; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
bash scripts/device-suites.sh $W > $W/out.txt 2>&1
(cd $W && tar czf $OUT/call2.tgz *.txt)
cat $W/out.txt
