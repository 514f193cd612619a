#!/usr/bin/env bash
# The final round's reserve (seventy-first session): random tunes of the example matmul on
# llvmpipe under 3-, 4- and 5-second budgets, seeds 1-3, with the build before the change
# (BEFORE, default .device/kerntune: 03:10's build) and after (AFTER, default
# target/release/kerntune), interleaved, each with an empty compile cache. One line per tune:
# the wall time, configs evaluated, the winner's time and samples, the final round's note.
set -u
BEFORE=${BEFORE:-.device/kerntune}
AFTER=${AFTER:-target/release/kerntune}
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$PWD/target/xdg-runtime}
for b in 3s 4s 5s; do
  for seed in 1 2 3; do
    for which in before after; do
      bin=$BEFORE; [ $which = after ] && bin=$AFTER
      export KERNTUNE_CACHE_DIR=$(mktemp -d)
      "$bin" tune examples/matmul/matmul.toml --backend wgpu --no-db --strategy random --budget $b --seed $seed --json 2>/dev/null |
        python3 "$(dirname "$0")/line.py" $which $b $seed
      rm -rf "$KERNTUNE_CACHE_DIR"
    done
  done
done
