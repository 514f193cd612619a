#!/usr/bin/env bash
# Two H200s through Vulkan (the device tool's nvidia-h200-x2): the example matmul at 2048³ tuned
# on one GPU and with `--devices all` (alternating, twice), then the GPU test suites (the new
# several-GPUs-through-wgpu test among them), then two looks at a shader that never ends: what
# a killed wgpu worker does until it is gone (process states sampled every 0.1 s), and where an
# in-process tune stays after its error (kernel stacks of its threads; gdb where there is one).
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
BIN=$PWD/.device/kerntune
W=/tmp/wd
mkdir -p "$W"
pack() { tar czf "$OUT/wd.tgz" -C "$W" .; }
T="/usr/bin/time -f wall_%e_s"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$W/gpu.txt" 2>&1
nproc >> "$W/gpu.txt"
"$BIN" devices --backend wgpu > "$W/devices.txt" 2>&1
(which gdb eu-stack; echo) > "$W/tools.txt" 2>&1
S=examples/matmul/matmul.toml
for i in 1 2; do
  for d in one all; do
    if [ $d = one ]; then DA="--device 0"; else DA="--devices all"; fi
    $T timeout -s KILL 200 "$BIN" tune $S --backend wgpu --key M=2048,N=2048,K=2048 --no-db --json $DA > "$W/matmul-$d-$i.json" 2> "$W/matmul-$d-$i.err"
  done
done
pack
bash scripts/gpu-check.sh tests
cp "$OUT/tests.txt" "$W/"
pack
( end=$((SECONDS+45)); while [ $SECONDS -lt $end ]; do
    echo "t $(date +%s.%N)"
    ps -eo pid,ppid,stat,wchan:32,etimes,args | grep '[.]device/kerntune' | cut -c1-160
    for p in $(pgrep -f '[.]device/kerntune'); do
      st=$(awk '{print $3}' /proc/$p/stat 2>/dev/null)
      if [ "$st" = D ] || [ "$st" = Z ]; then echo "stack $p $st"; head -12 /proc/$p/stack 2>/dev/null; fi
    done
    sleep 0.1
  done ) > "$W/hang-sampler.txt" 2>&1 &
SP=$!
KERNTUNE_LOG=kerntune_core::worker=debug $T timeout -s KILL 60 "$BIN" tune examples/faults/hang.toml --backend wgpu --no-db > "$W/hang-worker.txt" 2>&1
kill $SP 2>/dev/null
pack
KERNTUNE_WGPU_ISOLATION=0 KERNTUNE_LOG=info,wgpu_core=debug,wgpu_hal=debug timeout -s KILL 50 "$BIN" tune examples/faults/hang.toml --backend wgpu --no-db > "$W/inproc.txt" 2>&1 &
TP=$!
sleep 25
P=$(pgrep -P $TP | head -1)
echo "pid $P" > "$W/inproc-stacks.txt"
for t in /proc/$P/task/*; do echo "== $t $(cat $t/comm) $(cat $t/wchan) $(awk '{print $3}' $t/stat)"; cat $t/stack 2>/dev/null; done >> "$W/inproc-stacks.txt" 2>&1
if command -v gdb >/dev/null; then timeout -s KILL 20 gdb -p $P -batch -ex "thread apply all bt 20" > "$W/inproc-gdb.txt" 2>&1; fi
wait $TP
echo "exit $?" >> "$W/inproc.txt"
tail -c 300000 "$W/inproc.txt" > "$W/inproc.tail" && rm "$W/inproc.txt"
pack
