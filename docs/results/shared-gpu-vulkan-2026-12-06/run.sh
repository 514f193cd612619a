#!/usr/bin/env bash
# The sixty-sixth session's GPU call: the shared-GPU check through Vulkan (wgpu on an NVIDIA GPU,
# found in NVML by its PCI bus), and whether NVML lists a Vulkan process at all.
#  A. This process's PID namespaces; a wgpu tune in the background: nvidia-smi's whole table
#     (compute and graphics processes) and its list of compute processes, beside `pgrep`.
#  B. The example matmul through wgpu (hybrid, 40 configs, cold), alone; then beside a CUDA
#     convolution tune (random 200, cold, as another job on the GPU): its warning and note, and
#     its five best configs' times against the lone tune's. Then the same matmul through CUDA
#     beside it (the CUDA path after the check moved to kerntune-core).
#  C. Every GPU suite (`another_process_on_the_gpu_is_said_through_vulkan` new among them).
# Build at the session's HEAD: `cargo build --release --features cuda -p kerntune`, `bash
# scripts/gpu-check.sh --prepare`, `tar cJf .pack/device.tar.xz .device`; carry .pack and .gl.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
BIN=$PWD/.device/kerntune
W=/tmp/sharedvk; rm -rf $W; mkdir -p $W
M="examples/matmul/matmul.toml --strategy hybrid --budget 40 --seed 1 --no-db"
CONV="examples/convolution/convolution.toml --backend cuda --strategy random --budget 200 --seed 2 --no-db"
{
  nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
  grep NSpid /proc/self/status
  $BIN devices --backend wgpu 2>&1 | head -5
  echo "== A. a wgpu tune: what nvidia-smi lists"
  KERNTUNE_CACHE_DIR=$W/a $BIN tune $M --backend wgpu > $W/a.txt 2>&1 &
  sleep 6
  nvidia-smi | sed -n '/Processes/,$p'
  echo "-- compute apps:"; nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
  pgrep -a kerntune | cut -c1-80
  wait
  grep -E '^winner|shared|wall time' $W/a.txt | cut -c1-400
  echo "== B. the matmul through wgpu alone"
  KERNTUNE_CACHE_DIR=$W/b0 $BIN tune $M --backend wgpu > $W/b0.txt 2>&1; echo "exit $?"
  grep -E '^winner|shared|wall time' $W/b0.txt | cut -c1-400
  echo "== B. beside a CUDA convolution tune"
  KERNTUNE_CACHE_DIR=$W/other CUDA_CACHE_DISABLE=1 $BIN tune $CONV > $W/other.txt 2>&1 & po=$!
  sleep 4
  KERNTUNE_CACHE_DIR=$W/b1 $BIN tune $M --backend wgpu > $W/b1.txt 2>&1; echo "exit $? (the other tune: pid $po)"
  grep -E '^winner|shared|wall time' $W/b1.txt | cut -c1-900
  echo "-- the 5 best configs' times, alone and beside (ms)"
  for f in b0 b1; do echo "$f: $(grep -E '^│ [0-9]' $W/$f.txt | head -5 | awk -F'┆' '{gsub(/ /,"",$2); gsub(/ /,"",$3); printf "%s=%s  ", $2, $3}')"; done
  echo "== B. the matmul through CUDA beside it"
  KERNTUNE_CACHE_DIR=$W/b2 $BIN tune $M --backend cuda > $W/b2.txt 2>&1; echo "exit $?"
  grep -E '^winner|shared|wall time' $W/b2.txt | cut -c1-900
  kill $po 2>/dev/null; wait $po 2>/dev/null
} > $OUT/run.txt 2>&1
echo "== C. suites" >> $OUT/run.txt
bash scripts/device-suites.sh $OUT/suites >> $OUT/run.txt 2>&1
cat $OUT/run.txt
