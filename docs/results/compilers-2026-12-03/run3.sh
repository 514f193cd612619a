#!/usr/bin/env bash
# Third call, on an H200, at the build of 784eeb6 (the session's last code): every GPU suite.
set -u
. scripts/device-env.sh
W=/tmp/compilers7; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
bash scripts/device-suites.sh $W > $W/out.txt 2>&1
(cd $W && tar czf $OUT/call3.tgz *.txt)
cat $W/out.txt
