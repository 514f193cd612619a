#!/usr/bin/env bash
# On the GPU machine (device tool, carry .pack): for each SGEMM size, an exhaustive tune as the
# source GPU's database, retargeted as another GPU's (retarget.py), then tunes of 20
# evaluations with 16 compile threads learning from it: with the source's evaluation seconds
# (`timed`) and with them removed (`bare`, as a database written before they were kept), three
# of each, alternating, compile caches emptied before each. KERNTUNE_LOG shows each ask of the
# strategy (its capacity). Everything is packed into $OUT/gpu.tgz.
# bash device.sh [SIZE...]   (default: 4096 8192; M = N = K = SIZE)
set -u
. scripts/device-env.sh
R=docs/results/prior-first-flight-2026-11-27
BIN=$PWD/.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d); }
G=$OUT/gpu
mkdir -p "$G"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$G/gpu.txt" 2>&1
for size in ${*:-4096 8192}; do
  D=$G/$size
  mkdir -p "$D"
  key=M=$size,N=$size,K=$size
  rm -rf /tmp/src.sqlite* /tmp/prior-*.sqlite*
  cold
  /usr/bin/time -f "wall %e s" "$BIN" tune benches/sgemm/sgemm.toml --key $key --backend cuda -j 16 --db /tmp/src.sqlite --json > "$D/source.json" 2> "$D/source.err"
  python3 $R/retarget.py /tmp/src.sqlite /tmp/prior-timed.sqlite timed > "$D/retarget.txt" 2>&1
  python3 $R/retarget.py /tmp/src.sqlite /tmp/prior-bare.sqlite bare >> "$D/retarget.txt" 2>&1
  for i in 1 2 3; do
    for mode in timed bare; do
      cold; rm -rf /tmp/b.sqlite*
      NO_COLOR=1 KERNTUNE_LOG=warn,kerntune_core::run::search_loop=debug /usr/bin/time -f "wall %e s" "$BIN" tune benches/sgemm/sgemm.toml --key $key \
        --backend cuda -j 16 --budget 20 --prior /tmp/prior-$mode.sqlite --db /tmp/b.sqlite --json > "$D/$mode-$i.json" 2> "$D/$mode-$i.err"
      echo "$mode $i exit $?" >> "$D/exits.txt"
    done
  done
done
