#!/usr/bin/env bash
# The sixty-fifth session's second GPU call: other processes on the GPU a tune measures on.
#  A. Whether NVML's process ids are this machine's (a PID namespace would hide them): a CUDA
#     tune in the background, nvidia-smi's list of compute processes, and `pgrep`.
#  B. The convolution through CUDA (random 50, seed 1, cold), alone; then two such tunes at once
#     on the one GPU (as two shards of a Slurm array given no GPU of their own), each with its own
#     compile cache: their warnings and notes, and their winners' times against the one alone.
#  C. The GPU suite (the new test `another_process_on_the_gpu_is_said` among them) and the rest.
# Build at the session's HEAD: `cargo build --release --features cuda -p kerntune`, `bash
# scripts/gpu-check.sh --prepare`, `tar cJf .pack/device.tar.xz .device`; carry .pack and .gl.
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
W=/tmp/shared; rm -rf $W; mkdir -p $W
C="examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 1 --no-db"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  grep NSpid /proc/self/status
  echo "== A. NVML's process ids"
  KERNTUNE_CACHE_DIR=$W/a $BIN tune $C > $W/a.txt 2>&1 &
  sleep 5
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
  pgrep -a kerntune | cut -c1-80
  wait
  echo "== B. alone"
  KERNTUNE_CACHE_DIR=$W/b0 CUDA_CACHE_DISABLE=1 $BIN tune $C > $W/b0.txt 2>&1
  grep -E '^winner|shared|wall time' $W/b0.txt | cut -c1-400
  echo "== B. two at once"
  KERNTUNE_CACHE_DIR=$W/b1 CUDA_CACHE_DISABLE=1 $BIN tune $C > $W/b1.txt 2>&1 & p1=$!
  KERNTUNE_CACHE_DIR=$W/b2 CUDA_CACHE_DISABLE=1 $BIN tune $C > $W/b2.txt 2>&1 & p2=$!
  wait $p1; echo "first: exit $? (pid $p1)"; wait $p2; echo "second: exit $? (pid $p2)"
  for f in b1 b2; do echo "-- $f"; grep -E '^winner|shared|wall time' $W/$f.txt | cut -c1-600; done
  echo "-- the 5 best configs' times, alone and beside (ms)"
  for f in b0 b1 b2; do echo "$f: $(grep -E '^│ [0-9]' $W/$f.txt | head -5 | awk -F'┆' '{gsub(/ /,"",$2); gsub(/ /,"",$3); printf "%s=%s  ", $2, $3}')"; done
} > $OUT/run.txt 2>&1
echo "== C. suites" >> $OUT/run.txt
bash scripts/device-suites.sh $OUT/suites >> $OUT/run.txt 2>&1
cat $OUT/run.txt
