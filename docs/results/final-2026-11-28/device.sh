#!/usr/bin/env bash
# On a two-GPU machine (device tool, kind nvidia-h100-x2, carry .pack .gl): the GPU test
# suites at this build, then an adaptive SGEMM 8192³ tune (hybrid, 60 evaluations, 16 compile
# threads, cold caches) on one device and on both, with the search loop's debug log (its
# sizing). Packed into $OUT/final.tgz.
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d); }
G=$OUT/final
mkdir -p "$G"
nvidia-smi -L > "$G/gpus.txt" 2>&1
bash scripts/gpu-check.sh tests
mv "$OUT/tests.txt" "$G/tests.txt"
for d in "--device 0" "--devices all"; do
  n=${d//[^a-z0-9]/}
  cold
  NO_COLOR=1 KERNTUNE_LOG=warn,kerntune_core::run::search_loop=debug /usr/bin/time -f "wall %e s" "$BIN" tune benches/sgemm/sgemm.toml \
    --key M=8192,N=8192,K=8192 --backend cuda -j 16 $d --strategy hybrid --budget 60 --seed 1 --no-db --json > "$G/hybrid-$n.json" 2> "$G/hybrid-$n.err"
  echo "$d exit $?" >> "$G/exits.txt"
done
rm -f "$OUT/gpu.txt"
cd "$OUT" && gzip -9 final/*.json && tar czf final.tgz final && rm -rf final
