#!/bin/bash
# Device memory (one H200): a triad whose two 4 GiB buffers fit the GPU's free memory once but
# not with a device copy of each, this build against the one before (.device/kerntune-old,
# 57d6c0a), with a Python process (PyTorch) holding the rest of the GPU's memory as another job
# would; then the same problem on the whole GPU, and one that does not fit. Then the GPU suites.
# Run on the GPU machine from the repository root: bash docs/results/device-memory-2026-11-28/run1.sh
set -u
. scripts/device-env.sh
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
NEW=$PWD/.device/kerntune OLD=$PWD/.device/kerntune-old
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader > "$OUT/gpu.txt"
N=1073741824   # 4 GiB per f32 buffer
tune() { # label binary extra-args...
  local label=$1 bin=$2; shift 2
  /usr/bin/time -f "wall %e s" "$bin" tune ${SPEC:-examples/triad/triad.toml} --backend cuda --no-db --key N=$N \
    --strategy random --budget 4 --seed 1 "$@" > "$OUT/$label.txt" 2>&1
  echo "rc $?" >> "$OUT/$label.txt"
}
# hold LEAVE_GIB free (beside what is used now), until /tmp/ballast.stop exists
ballast() {
  rm -f /tmp/ballast.ready /tmp/ballast.stop
  python3 - "$1" > "$OUT/ballast-$1.txt" 2>&1 <<'PY' &
import sys, time, os, torch
leave = int(float(sys.argv[1]) * 2**30)
free, total = torch.cuda.mem_get_info()
x = torch.empty(free - leave, dtype=torch.uint8, device="cuda")
free2, _ = torch.cuda.mem_get_info()
print(f"free before {free/2**30:.2f} GiB, held {(free-leave)/2**30:.2f} GiB, free after {free2/2**30:.2f} GiB of {total/2**30:.2f}", flush=True)
open("/tmp/ballast.ready", "w").write("ok")
while not os.path.exists("/tmp/ballast.stop"):
    time.sleep(0.2)
PY
  for i in $(seq 1 300); do [ -f /tmp/ballast.ready ] && break; sleep 0.2; done
}
unballast() { touch /tmp/ballast.stop; wait; }
# Room for the buffers (8 GiB), the workspace's reserve (2.2 GiB on an H200 + the flush buffer) and
# the two contexts (CLI and worker), not for one device copy more: 8 + 2.4 + 2 GiB.
ballast 12.5
tune old-fits-once "$OLD"
tune new-fits-once "$NEW"
sed 's/^\[bench\]/[bench]\nrotate_inputs = true/' examples/triad/triad.toml > examples/triad/triad_rotate.toml
SPEC=examples/triad/triad_rotate.toml tune new-fits-once-rotate "$NEW"
unballast
# Less than the buffers need.
ballast 6
tune old-does-not-fit "$OLD"
tune new-does-not-fit "$NEW"
unballast
# The whole GPU: every buffer with its device copy, as before.
tune old-whole-gpu "$OLD"
tune new-whole-gpu "$NEW"
# The GPU suites.
TESTS=".device/tests/gpu .device/tests/conformance .device/tests/open .device/tests/launch" bash scripts/gpu-check.sh tests
