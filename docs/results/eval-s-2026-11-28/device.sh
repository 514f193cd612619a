#!/usr/bin/env bash
# On one GPU (device tool, carry .pack .gl): the GPU test suites at this build (f280547: a config
# timed in parts counts once in the mean evaluation), then a hybrid SGEMM 4096³ tune (40
# evaluations, 16 compile threads, cold caches) with the search loop's debug log (the flight it
# sizes as outcomes arrive) and its JSON (each config's eval_seconds, the shortlist's among
# them). Packed into $OUT/evals.tgz.
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d); }
G=$OUT/evals
mkdir -p "$G"
nvidia-smi -L > "$G/gpus.txt" 2>&1
bash scripts/gpu-check.sh tests
mv "$OUT/tests.txt" "$G/tests.txt"
for s in 1 2; do
  cold
  NO_COLOR=1 KERNTUNE_LOG=warn,kerntune_core::run::search_loop=debug /usr/bin/time -f "wall %e s" "$BIN" tune benches/sgemm/sgemm.toml \
    --key M=4096,N=4096,K=4096 --backend cuda -j 16 --strategy hybrid --budget 40 --seed $s --no-db --json > "$G/hybrid-$s.json" 2> "$G/hybrid-$s.err"
  echo "seed $s exit $?" >> "$G/exits.txt"
done
rm -f "$OUT/gpu.txt"
cd "$OUT" && gzip -9 evals/*.json && tar czf evals.tgz evals && rm -rf evals
