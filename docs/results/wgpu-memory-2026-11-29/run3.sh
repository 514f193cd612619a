#!/bin/bash
# Call 3: the Vulkan triad at 2 x 1020 MiB on an empty H200 (2.27-2.44 ms) against the same with
# any other process holding CUDA memory (0.90 ms, call 2). What changes: the clocks (sampled by
# nvidia-smi every 50 ms during each tune), a CUDA context alone (no allocation), the size.
. scripts/device-env.sh; export KERNTUNE_CACHE_DIR=/tmp/kc
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
other() {  # another process: $1 = "context" (a CUDA context, a 4-byte tensor) or GiB to hold
  rm -f /tmp/o.ready /tmp/o.stop
  python3 - "$1" <<'PY' &
import sys, time, os, torch
if sys.argv[1] == "context":
    x = torch.zeros(1, device="cuda")
else:
    x = torch.empty(int(float(sys.argv[1]) * 2**30), dtype=torch.uint8, device="cuda")
print("other process:", sys.argv[1], torch.cuda.memory_allocated() / 2**30, "GiB allocated", flush=True)
open("/tmp/o.ready", "w").write("ok")
while not os.path.exists("/tmp/o.stop"):
    time.sleep(0.2)
PY
  for i in $(seq 1 300); do [ -f /tmp/o.ready ] && break; sleep 0.2; done
}
done_other() { touch /tmp/o.stop; wait; sleep 1; }
tune() {  # $1 N, then environment
  local n=$1; shift
  echo "--- wgpu N=$n $*"
  nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,memory.used --format=csv,noheader -lms 50 > /tmp/smi.txt &
  local smi=$!
  env "$@" .device/kerntune tune examples/triad/triad.toml --backend wgpu --no-db --key N=$n --strategy random --budget 4 --seed 1 2>&1 | grep -E "^winner" | cut -c1-120
  kill $smi; wait $smi 2>/dev/null
  # The clocks while the GPU was busy (power above idle), as counts of (pstate, sm, mem).
  awk -F', ' '{ split($5, p, " "); if (p[1] + 0 > 150) print $2, $3, $4 }' /tmp/smi.txt | sort | uniq -c | sort -rn | head -4
}
{
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,pstate,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "=== empty GPU"
for n in 67108864 134217728 200000000 267386880; do tune $n; done
tune 267386880 KERNTUNE_WGPU_ISOLATION=0
echo "=== another process with a CUDA context only"; other context; tune 267386880; done_other
echo "=== another process holding 1 GiB"; other 1; tune 267386880; tune 67108864; done_other
echo "=== empty GPU again"; tune 267386880
} > $OUT/clocks.txt 2>&1
