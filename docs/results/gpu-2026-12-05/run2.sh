#!/usr/bin/env bash
# The fifty-sixth session's second H200 call, with the build that groups failures without what
# the kernel printed before it failed (a device-side assertion's two configs were told apart by
# it in call 1's `gpu` suite): examples/faults/prints.toml tuned REPEATS times, each run's causes
# (count, kind, the message's start), then the `gpu` suite, then the memory-limited convolution
# again, without the memory check and with it (run2.sh of compiler-trim-2026-12-04,
# RUNS="new-unlimited new-nocheck new-limited2"), the build also counting a compile given up on at
# the time limit as compiling, and naming compiles the out-of-memory killer ended, in the `time:` line.
set -u
. scripts/device-env.sh
export KERNTUNE_CACHE_DIR=/tmp/ktp
for i in $(seq ${REPEATS:-6}); do
  .device/kerntune tune examples/faults/prints.toml --backend cuda --no-db --json > $OUT/prints$i.json 2> /dev/null
  echo "prints $i: exit $? $(python3 -c "
import json; v=json.load(open('$OUT/prints$i.json'))[0]
print('; '.join(f\"{c['count']} × {c['kind']}: {c['message'][:90]}\" for c in v['causes']))")"
done
W=/tmp/s56; mkdir -p $W
KERNTUNE_REQUIRE_DEVICE=cuda,wgpu KERNTUNE_BIN=$PWD/.device/kerntune KERNTUNE_CACHE_DIR=$W/suites timeout 240 .device/tests/gpu --test-threads=1 > $OUT/suite-gpu.txt 2>&1
echo "gpu: exit $?"; grep -E "^test result|FAILED|panicked" $OUT/suite-gpu.txt | cut -c1-1500
TAG=call6 RUNS="${RUNS6:-new-unlimited new-nocheck new-limited2}" bash docs/results/compiler-trim-2026-12-04/run2.sh
