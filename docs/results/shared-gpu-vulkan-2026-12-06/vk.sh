#!/usr/bin/env bash
# The second call: whether NVML lists a process that uses the GPU through Vulkan only, and so
# whether a wgpu tune beside another wgpu tune (no CUDA anywhere) is said.
#  A. wgpu tunes of the example matmul one after the other in the background (25 s): nvidia-smi's
#     process table and its compute list while they run.
#  B. The example matmul through wgpu beside it: warned or not.
# Same build and carry as run.sh.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
BIN=$PWD/.device/kerntune
W=/tmp/sharedvk2; rm -rf $W; mkdir -p $W
{
  # The matmul tunes in about a second: tuned again and again for 25 s.
  ( end=$((SECONDS + 25)); while [ $SECONDS -lt $end ]; do KERNTUNE_CACHE_DIR=$W/bg $BIN tune examples/matmul/matmul.toml --backend wgpu --strategy random --budget 300 --no-db >> $W/bg.txt 2>&1; done ) & pb=$!
  sleep 2
  for i in 1 2 3; do
    echo "== A$i. the background wgpu tunes; the kerntune processes:"; pgrep -a kerntune | cut -c1-80
    nvidia-smi | sed -n '/Processes/,$p'
    echo "-- compute apps:"; nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
    sleep 0.5
  done
  echo "== B. a wgpu tune beside it"
  KERNTUNE_CACHE_DIR=$W/b $BIN tune examples/matmul/matmul.toml --backend wgpu --strategy hybrid --budget 40 --seed 1 --no-db > $W/b.txt 2>&1; echo "exit $?"
  grep -E '^winner|shared|wall time' $W/b.txt | cut -c1-700
  kill $pb 2>/dev/null; wait $pb 2>/dev/null
} > $OUT/vk.txt 2>&1
cat $OUT/vk.txt
