#!/usr/bin/env bash
# On the GPU machine (device tool, carry .pack), the final build: two SGEMM 4096³ tunes of 20
# evaluations with 16 compile threads learning from the Kernel Tuner cache of kt-h100/ (its
# evaluation seconds no longer read), and the database path at 8192³ once more (device.sh's
# source tune and one `timed` tune); then the GPU test suites. Packed into $OUT/final.tgz.
set -u
. scripts/device-env.sh
R=docs/results/prior-first-flight-2026-11-27
BIN=$PWD/.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d); }
G=$OUT/final
mkdir -p "$G"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$G/gpu.txt" 2>&1
zcat $R/kt-h100/kt_sgemm_bf.json.gz > /tmp/kt_sgemm_bf.json
for i in 1 2; do
  cold; rm -rf /tmp/b.sqlite*
  NO_COLOR=1 KERNTUNE_LOG=warn,kerntune_core::run::search_loop=debug /usr/bin/time -f "wall %e s" "$BIN" tune benches/sgemm/sgemm.toml --backend cuda -j 16 \
    --budget 20 --prior /tmp/kt_sgemm_bf.json --db /tmp/b.sqlite --json > "$G/from-kt-$i.json" 2> "$G/from-kt-$i.err"
done
key=M=8192,N=8192,K=8192
cold; rm -rf /tmp/src.sqlite* /tmp/prior-*.sqlite*
/usr/bin/time -f "wall %e s" "$BIN" tune benches/sgemm/sgemm.toml --key $key --backend cuda -j 16 --db /tmp/src.sqlite --json > "$G/source-8192.json" 2> "$G/source-8192.err"
python3 $R/retarget.py /tmp/src.sqlite /tmp/prior-timed.sqlite timed > "$G/retarget.txt" 2>&1
cold; rm -rf /tmp/b.sqlite*
NO_COLOR=1 KERNTUNE_LOG=warn,kerntune_core::run::search_loop=debug /usr/bin/time -f "wall %e s" "$BIN" tune benches/sgemm/sgemm.toml --key $key --backend cuda -j 16 \
  --budget 20 --prior /tmp/prior-timed.sqlite --db /tmp/b.sqlite --json > "$G/timed-8192.json" 2> "$G/timed-8192.err"
bash scripts/gpu-check.sh tests
mv "$OUT/tests.txt" "$G/tests.txt"
rm -f "$OUT/gpu.txt"
cd "$OUT" && gzip -9 final/*.json && tar czf final.tgz final && rm -rf final
