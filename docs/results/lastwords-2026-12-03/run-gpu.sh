#!/usr/bin/env bash
# The H200 call of the forty-sixth session at d2fbe07 (workers' stderr read and kept): the
# published-kernel faults as a user sees them (scripts/gpu-check.sh faults: a worker that dies on
# a faulting kernel now ends its note with its last words, where it wrote any), and every suite.
set -u
. scripts/device-env.sh
W=/tmp/lastwords; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
{
  bash scripts/gpu-check.sh faults
  cp $OUT/faults.txt $W/faults.txt
  grep -E "^--- |^exit|worker|last words" $W/faults.txt | cut -c1-600 | head -60
  bash scripts/device-suites.sh $W
} 2>&1 | tee $W/log.txt
(cd $W && tar czf $OUT/call.tgz *.txt)
