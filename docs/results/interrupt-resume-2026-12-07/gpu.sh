#!/usr/bin/env bash
# The seventy-third session's GPU call: every GPU suite (`gpu-check.sh tests`), then an
# exhaustive CUDA tune of SGEMM 410 interrupted with SIGINT and run again (the interrupted run
# now keeps the configs waiting on its shortlist with their verification launch, and the run
# that resumes measures the contenders among them in full), against the same tune run whole from
# cold caches; and the matmul at 2048³, whose summary names the tie-break rule. Run through the
# device tool with .pack and .gl carried:
#   rm -rf .device; bash docs/results/interrupt-resume-2026-12-07/gpu.sh
set -u
tar xJf .pack/device.tar.xz
. scripts/device-env.sh
[ "${SKIP_TESTS:-}" = 1 ] || bash scripts/gpu-check.sh tests
BIN=$PWD/.device/kerntune
# The SGEMM kernel is not kerntune's (../shared/bench/sgemm.cu): the pack carries it.
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
SPEC=benches/sgemm/sgemm.toml
{
  echo "--- whole, cold (no database, an empty compile cache)"
  rm -rf "$KERNTUNE_CACHE_DIR"
  /usr/bin/time -f "wall %e s" "$BIN" tune $SPEC --backend cuda --strategy exhaustive --db "$OUT/whole.sqlite" --top 5; echo "exit $?"
  for at in 4 8; do
    echo "--- interrupted by SIGINT at $at s (an empty compile cache), then the same command again"
    rm -rf "$KERNTUNE_CACHE_DIR" "$OUT/int-$at.sqlite"
    /usr/bin/time -f "wall %e s" timeout -s INT $at "$BIN" tune $SPEC --backend cuda --strategy exhaustive --db "$OUT/int-$at.sqlite" --top 5; echo "exit $?"
    "$BIN" db show --db "$OUT/int-$at.sqlite"
    /usr/bin/time -f "wall %e s" "$BIN" tune $SPEC --backend cuda --strategy exhaustive --db "$OUT/int-$at.sqlite" --top 5; echo "exit $?"
  done
  echo "--- matmul 2048^3 (the tie-break rule named)"
  /usr/bin/time -f "wall %e s" "$BIN" tune examples/matmul/matmul.toml --backend cuda --key M=2048,N=2048,K=2048 --no-db --top 5; echo "exit $?"
} > "$OUT/interrupt.txt" 2>&1
ls -la "$OUT"
