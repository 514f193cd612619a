#!/usr/bin/env bash
# The final round's reserve on a GPU (run through the device tool, carrying .kt/before and
# .kt/after): SGEMM 410 random tunes under 2- and 4-second budgets, seeds 1-2, the build before
# (.kt/before/kerntune.xz, with ../shared/bench/sgemm.cu beside it) and after
# (.kt/after/kerntune.xz), both `cargo build --release --features cuda`, interleaved, with the compile
# cache warm (filled by one exhaustive tune first: configs then come faster than the device
# takes them, so the shortlist waits at the stop), then one cold pair at 4 s.
set -u
. scripts/device-env.sh
xz -dkf .kt/after/kerntune.xz; xz -dkf .kt/before/kerntune.xz
cp .kt/before/sgemm.cu benches/sgemm/sgemm.cu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
here=$(dirname "$0")
tune() { # which budget seed
  bin=.kt/before/kerntune; [ "$1" = after ] && bin=.kt/after/kerntune
  "$bin" tune benches/sgemm/sgemm.toml --backend cuda --no-db --strategy random --budget $2 --seed $3 --json 2>/dev/null |
    python3 "$here/line.py" "$1" "$2" "$3"
}
export KERNTUNE_CACHE_DIR=/tmp/kt-warm CUDA_CACHE_PATH=/tmp/nv-warm
.kt/before/kerntune tune benches/sgemm/sgemm.toml --backend cuda --no-db --top 1 > /dev/null 2>&1; echo "fill: exit $?"
for b in 2s 4s; do for seed in 1 2; do for which in before after; do tune $which $b $seed; done; done; done
for which in before after; do
  export KERNTUNE_CACHE_DIR=$(mktemp -d) CUDA_CACHE_PATH=$(mktemp -d)
  echo "cold:"; tune $which 4s 1
done
