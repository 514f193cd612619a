#!/bin/bash
# The conformance failure of call 4 (every triad config one application off, after another
# process's GPU memory was freed and with warm compile caches), traced: 57d6c0a's conformance
# binary (.device/conformance-old) against this build's, three rounds each on a warm cache;
# then the GPU suites.
. scripts/device-env.sh; export KERNTUNE_CACHE_DIR=/tmp/kc
for round in 1 2 3; do
  rm -f /tmp/ballast.ready /tmp/ballast.stop
  python3 - <<'PY' &
import time, os, torch
leave = 6 * 2**30
free, total = torch.cuda.mem_get_info()
x = torch.empty(free - leave, dtype=torch.uint8, device="cuda")
open("/tmp/ballast.ready", "w").write("ok")
while not os.path.exists("/tmp/ballast.stop"):
    time.sleep(0.2)
PY
  for i in $(seq 1 300); do [ -f /tmp/ballast.ready ] && break; sleep 0.2; done
  touch /tmp/ballast.stop; wait
  for t in .device/conformance-old .device/tests/conformance; do
    echo "round $round $t"
    KERNTUNE_REQUIRE_DEVICE=cuda $t cuda:: --test-threads=1 2>&1 | grep -E "^test |called|test result" | cut -c1-300
  done
done
bash scripts/gpu-check.sh tests
grep -E "^(---|exit|test result|wall)|FAILED|panicked" $OUT/tests.txt
