#!/usr/bin/env bash
# The seventy-fifth session's GPU call: a fleet's database and its exports read back as recorded
# spaces, priors and report entries, on real measurements (the example matmul on an H100 through
# CUDA at two sizes and through Vulkan at one), and the progress bar's per-stage eta through an
# exhaustive SGEMM 410 from cold caches under a terminal. Run through the device tool with .kt
# (the release binary built with `--features cuda`, and ../shared/bench/sgemm.cu) and .gl
# carried:
#   bash docs/results/fleet-files-2026-12-07/fleet.sh
set -u
mkdir -p .device && cp .kt/kerntune .device/kerntune
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
cp .kt/sgemm.cu benches/sgemm/sgemm.cu
rm -rf "$KERNTUNE_CACHE_DIR"
MM=examples/matmul/matmul.toml
F=$OUT/fleet
mkdir -p "$F"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "== the fleet: CUDA at 1024³ and 2048³, Vulkan at 1024³, exhaustive"
  "$BIN" tune $MM --backend cuda --strategy exhaustive --db "$F/fleet.sqlite" --key M=1024,N=1024,K=1024 --key M=2048,N=2048,K=2048 --top 1; echo "exit $?"
  "$BIN" tune $MM --backend wgpu --strategy exhaustive --db "$F/fleet.sqlite" --key M=1024,N=1024,K=1024 --top 1; echo "exit $?"
  "$BIN" db show --db "$F/fleet.sqlite"; echo "exit $?"
  "$BIN" db export --db "$F/fleet.sqlite" --format t4 -o "$F/fleet.t4.json"; echo "exit $?"
  "$BIN" db export --db "$F/fleet.sqlite" -o "$F/fleet.json"; echo "exit $?"
  echo "== simulate each form"
  for f in "$F/fleet.sqlite" "$F/fleet.t4.json" "$F/fleet.json"; do
    "$BIN" simulate "$f" --strategy random,hybrid --repeats 20 --at 10,20,50; echo "exit $?"
  done
  "$BIN" simulate --leave-one-out "$F/fleet.t4.json" --repeats 20; echo "exit $?"
  echo "== a third size on CUDA learning from the T4 export (budget 10)"
  "$BIN" tune $MM --backend cuda --no-db --key M=1536,N=1536,K=1536 --budget 10 --prior "$F/fleet.t4.json" --top 1; echo "exit $?"
  "$BIN" tune $MM --backend cuda --no-db --key M=1536,N=1536,K=1536 --budget 10 --no-prior --top 1; echo "exit $?"
  echo "== drawn"
  "$BIN" report --db "$F/fleet.t4.json" -o "$F/fleet.html"; echo "exit $?"
  echo "== a backend named that finds no device"
  "$BIN" tune $MM --backend hip --no-db; echo "exit $?"
} > "$OUT/fleet.txt" 2>&1
rm -rf "$KERNTUNE_CACHE_DIR"
{
  /usr/bin/time -f "wall %e s" script -qfc "$BIN tune benches/sgemm/sgemm.toml --backend cuda --strategy exhaustive --no-db --top 3" "$OUT/eta-sgemm.typescript" > /dev/null; echo "exit $?"
} > "$OUT/eta.txt" 2>&1
tr '\r' '\n' < "$OUT/eta-sgemm.typescript" | grep -ao "\[00:00:[0-9]*\].*" | sed 's/\x1b\[[0-9;]*[a-zA-Z]//g' | sed 's/ *$//' | uniq > "$OUT/eta-sgemm.txt"
grep -a "winner:\|wall time" "$OUT/eta-sgemm.typescript" >> "$OUT/eta.txt"
