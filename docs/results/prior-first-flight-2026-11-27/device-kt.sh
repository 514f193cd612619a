#!/usr/bin/env bash
# On the GPU machine (device tool, carry .pack and .whl from ../shared/bench/fetch-wheels.sh):
# what a config costs Kernel Tuner against kerntune on the same GPU and SGEMM space (4096³), and
# the first flight a tune sizes from Kernel Tuner's cache as its prior. Kernel Tuner brute-forces
# the space through ../shared/bench/kernel_tuner_side.py's `sgemm()` (copied into .device/bench
# by `gpu-check.sh --prepare`); kerntune tunes it exhaustively into a database (its per-config
# seconds dumped); then two tunes of 20 evaluations with 16 compile threads learn from the
# Kernel Tuner cache. Everything is packed into $OUT/kt.tgz.
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d) CUPY_CACHE_DIR=$(mktemp -d); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
G=$OUT/kt
mkdir -p "$G"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$G/gpu.txt" 2>&1
cold
(cd .device/bench && OUT=$G PYTHONUNBUFFERED=1 timeout 450 /usr/bin/time -f "wall %e s" python3 -c 'import json, kernel_tuner_side as k; print(json.dumps(k.sgemm()))') > "$G/kernel-tuner.txt" 2>&1
rm -f "$G"/*.lock
cold
rm -rf /tmp/src.sqlite*
/usr/bin/time -f "wall %e s" "$BIN" tune benches/sgemm/sgemm.toml --backend cuda -j 16 --db /tmp/src.sqlite --json > "$G/kerntune-source.json" 2> "$G/kerntune-source.err"
python3 -c '
import json, sqlite3, sys
c = sqlite3.connect("/tmp/src.sqlite")
rows = c.execute("SELECT config, time, json_extract(record, \"$.trace.compile_s\"), json_extract(record, \"$.trace.eval_s\") FROM measurements").fetchall()
json.dump([{"config": k, "time_s": t, "compile_s": cs, "eval_s": e} for k, t, cs, e in rows], open(sys.argv[1], "w"), indent=0)
' "$G/kerntune-seconds.json"
for i in 1 2; do
  cold; rm -rf /tmp/b.sqlite*
  NO_COLOR=1 KERNTUNE_LOG=warn,kerntune_core::run::search_loop=debug /usr/bin/time -f "wall %e s" "$BIN" tune benches/sgemm/sgemm.toml --backend cuda -j 16 \
    --budget 20 --prior "$G/kt_sgemm_bf.json" --db /tmp/b.sqlite --json > "$G/from-kt-$i.json" 2> "$G/from-kt-$i.err"
done
cd "$OUT" && gzip -9 kt/*.json && tar czf kt.tgz kt && rm -rf kt
