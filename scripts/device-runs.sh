# Sourced (`. scripts/device-runs.sh`) at the top of a run script under docs/results that tunes
# the hub convolution on the GPU machine; sources device-env.sh (which unpacks the binaries and
# sets OUT and KERNTUNE_CACHE_DIR), then sets:
#
# - BIN (the kerntune binary built here), SPEC (the hub convolution's spec), W (a work folder);
# - W/gpu.txt: the GPU's name, driver and memory, the core count, and LIKE: the recorded space of
#   the GPU of the same kind in core/tests/data (on an H200 the H100's, else the H200's);
# - pack: packs W into OUT/PACK_NAME.tgz (PACK_NAME defaults to runs; call it after each seed,
#   so that a call cut short still returns what it did);
# - cold: empties kerntune's compile cache and gives the CUDA driver a fresh one (a cold tune);
# - T: a `time` prefix that writes the wall seconds (`wall_S_s`) to the run's stderr;
# - cold_tune NAME BINARY ARGS…: a cold tune of SPEC by BINARY for BUDGET evaluations (default
#   20) on CUDA with ARGS (the seed, the priors or the strategy), no database, its JSON report in
#   W/NAME.json and its stderr (with the wall) in W/NAME.err; variables set before it on its line
#   (`BUDGET=48 cold_tune …`, `KERNTUNE_LOG=… cold_tune …`) reach the tune.
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
SPEC=examples/convolution/convolution_hub.toml
W=/tmp/kt-runs
mkdir -p "$W"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$W/gpu.txt" 2>&1
nproc >> "$W/gpu.txt"
if grep -q H200 "$W/gpu.txt"; then LIKE=core/tests/data/convolution_H100.json.gz; else LIKE=core/tests/data/convolution_H200.json.gz; fi
pack() { tar czf "$OUT/${PACK_NAME:-runs}.tgz" -C "$W" .; }
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; CUDA_CACHE_PATH=$(mktemp -d); export CUDA_CACHE_PATH; }
T="/usr/bin/time -f wall_%e_s"
cold_tune() {
  local name=$1 bin=$2
  shift 2
  cold; $T "$bin" tune $SPEC --backend cuda --budget "${BUDGET:-20}" "$@" --no-db --json > "$W/$name.json" 2> "$W/$name.err"
}
