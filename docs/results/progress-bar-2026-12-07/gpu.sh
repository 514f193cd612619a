#!/usr/bin/env bash
# The seventy-fourth session's GPU call: every GPU suite (`gpu-check.sh tests`), then what a
# user sees of this session's changes on a CUDA machine: the tune's progress bar under a
# terminal (`script`) through an exhaustive SGEMM 410 from cold caches (the bar now counts the
# shortlist's measurements in full), `kerntune devices` (a note for each backend that found
# nothing), two problems in one command (`--key` repeated), `cache show` after it and the
# report of both problems (`report --key` with two values of one size). Run through the device
# tool with .pack and .gl carried:
#   rm -rf .device; bash docs/results/progress-bar-2026-12-07/gpu.sh
set -u
tar xJf .pack/device.tar.xz
. scripts/device-env.sh
[ "${SKIP_TESTS:-}" = 1 ] || bash scripts/gpu-check.sh tests
BIN=$PWD/.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
{
  echo "--- devices"
  "$BIN" devices > "$OUT/devices.txt"; echo "exit $?"
  echo "--- SGEMM 410 exhaustive, cold, under a terminal"
  rm -rf "$KERNTUNE_CACHE_DIR"
  if command -v script > /dev/null; then
    /usr/bin/time -f "wall %e s" script -qfc "$BIN tune benches/sgemm/sgemm.toml --backend cuda --strategy exhaustive --no-db --top 3" "$OUT/bar-sgemm.typescript" > /dev/null; echo "exit $?"
    tail -c 4000 "$OUT/bar-sgemm.typescript" | tr '\r' '\n' | grep -a "winner:\|wall time"
  else
    echo "no script(1) here: the bar is not drawn without a terminal"
  fi
  echo "--- two problems in one command"
  /usr/bin/time -f "wall %e s" "$BIN" tune examples/matmul/matmul.toml --backend cuda --key M=1024,N=1024,K=1024 --key M=2048,N=2048,K=2048 --db "$OUT/mm.sqlite" --top 3; echo "exit $?"
  "$BIN" cache show; echo "exit $?"
  "$BIN" report examples/matmul/matmul.toml --db "$OUT/mm.sqlite" --key M=1024 --key M=2048 -o "$OUT/mm.html"; echo "exit $?"
} > "$OUT/session.txt" 2>&1
ls -la "$OUT"
