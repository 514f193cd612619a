#!/usr/bin/env bash
# The seventy-second session's GPU call: the CUDA tunes (the summary's new `default:` line),
# the published-kernel cases, the report step, and two fault examples tuned into a database
# that comes back ($OUT/faults.sqlite), for the report (failures drawn by parameter) to be
# rendered here with the newest build. Run through the device tool with .pack and .gl carried:
#   rm -rf .device; bash docs/results/user-pass-2026-12-07/gpu.sh
set -u
tar xJf .pack/device.tar.xz
. scripts/device-env.sh
bash scripts/gpu-check.sh cuda faults report
BIN=$PWD/.device/kerntune
{
  for f in faults nonfinite; do
    echo "--- examples/faults/$f.toml into faults.sqlite"
    /usr/bin/time -f "wall %e s" "$BIN" tune examples/faults/$f.toml --backend cuda --db "$OUT/faults.sqlite" --top 4; echo "exit $?"
  done
} > "$OUT/faults-db.txt" 2>&1
cp "$KERNTUNE_CACHE_DIR/db.sqlite" "$OUT/report.sqlite" 2>/dev/null
ls -la "$OUT"
