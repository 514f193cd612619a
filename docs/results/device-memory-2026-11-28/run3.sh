#!/bin/bash
# The conformance failure of call 4 reproduced: another process frees its GPU memory, then
# conformance's CUDA tests run on a warm cache, three rounds (call 6; its output is quoted in README.md).
. scripts/device-env.sh; export KERNTUNE_CACHE_DIR=/tmp/kc
T=.device/tests/conformance
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
  nvidia-smi --query-gpu=memory.used --format=csv,noheader
  KERNTUNE_LOG=kerntune_cuda=info KERNTUNE_REQUIRE_DEVICE=cuda $T cuda:: --test-threads=1 2>&1 | grep -E "^test |panicked|called|test result|restored|INFO" | cut -c1-400 | head -12
  nvidia-smi --query-gpu=memory.used --format=csv,noheader
done
