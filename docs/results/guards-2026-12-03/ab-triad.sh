#!/usr/bin/env bash
# The shipped triad (make demo's tune) on this machine's llvmpipe, OLD and NEW alternating,
# eight pairs: wall seconds and the winner's time (ms) of each run.
#   OLD=/path/to/old/kerntune NEW=target/release/kerntune bash docs/results/guards-2026-12-03/ab-triad.sh > ab-triad.txt
set -u
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/xdg}; mkdir -p $XDG_RUNTIME_DIR
export KERNTUNE_CACHE_DIR=/tmp/guards-ab
for i in 1 2 3 4 5 6 7 8; do
  for b in old new; do
    bin=$NEW; [ $b = old ] && bin=$OLD
    s=$(date +%s.%N)
    w=$($bin tune examples/triad/triad.toml --no-db 2>&1 | grep -E "^winner" | awk '{print $3}')
    e=$(date +%s.%N)
    echo "$b $(python3 -c "print(f'{$e-$s:.2f}')") s, winner $w ms"
  done
done
