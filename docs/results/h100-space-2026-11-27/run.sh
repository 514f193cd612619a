#!/usr/bin/env bash
# The hub convolution (examples/convolution/convolution_hub.toml, 4,362 valid configs) brute
# forced on one H100, to record its whole space: a GPU outside the six of
# ../shared/spaces/gpus, for simulating the transfer search where the sources mislead it.
# Split into SHARDS parts (`tune --shard K/SHARDS`, exhaustive: every K-th config); this call
# runs the parts named in PARTS, one after the other, each into its own database under $OUT,
# with a time budget as a safety net (a part cut short keeps what it measured). Every config is
# verified against the default config's output (the spec's default). Run on the GPU machine
# from the repository root with .pack/ carried (the device build).
#   SHARDS=4 PARTS="0 1" bash docs/results/h100-space-2026-11-27/run.sh
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
SPEC=examples/convolution/convolution_hub.toml
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
nproc >> "$OUT/gpu.txt"
for k in ${PARTS}; do
  rm -rf "$KERNTUNE_CACHE_DIR"; CUDA_CACHE_PATH=$(mktemp -d); export CUDA_CACHE_PATH
  /usr/bin/time -f "wall_%e_s" "$BIN" tune $SPEC --backend cuda --strategy exhaustive --shard "$k/$SHARDS" \
    --budget "${PART_BUDGET:-270s}" --db "$OUT/part-$k.sqlite" --json > "$OUT/part-$k.json" 2> "$OUT/part-$k.err"
  tail -3 "$OUT/part-$k.err"
done
