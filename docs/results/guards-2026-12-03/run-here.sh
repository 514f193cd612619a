#!/usr/bin/env bash
# The same as run.sh on this 2-core machine's software Vulkan (llvmpipe): OLD (d38194f) and NEW
# interleaved, three rounds; the stencil at 4096² (read_past.toml) and 1024², the planted faults,
# the shipped triad (make demo's tune) and the matmul's random 40 (seed 1).
#   OLD=/path/to/old/kerntune NEW=target/release/kerntune bash docs/results/guards-2026-12-03/run-here.sh > runs.txt
set -u
D=docs/results/guards-2026-12-03
W=/tmp/guards-here; rm -rf $W; mkdir -p $W
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/xdg}; mkdir -p $XDG_RUNTIME_DIR
sed 's/nx = 4096/nx = 1024/; s/ny = 4096/ny = 1024/' examples/faults/read_past.toml > examples/faults/read_past_1024.toml
secs() { python3 -c "print(f'{$2-$1:.2f}')"; }
tune() {
  local name=$1 bin=$2; shift 2
  local t0=$(date +%s.%N)
  $bin tune "$@" > $W/$name.txt 2>&1; local rc=$?
  local t1=$(date +%s.%N)
  echo "== $name: tune $*"
  grep -vE "^(┌|├|╞|└|│)" $W/$name.txt | grep -E "^(winner|error|failures|    [0-9]|memcheck|warning)" | cut -c1-400
  echo "exit $rc, $(secs $t0 $t1) s"
}
for round in 1 2 3; do
  for b in old new; do
    bin=$NEW; [ $b = old ] && bin=$OLD
    export KERNTUNE_CACHE_DIR=$W/cache-$b
    tune $b-$round-read-past-4096 $bin examples/faults/read_past.toml --no-db
    tune $b-$round-read-past-1024 $bin examples/faults/read_past_1024.toml --no-db
    tune $b-$round-planted $bin $D/planted.toml --no-db --memcheck
    tune $b-$round-triad $bin examples/triad/triad.toml --no-db
    tune $b-$round-matmul $bin examples/matmul/matmul.toml --no-db --strategy random --budget 40 --seed 1
  done
done
rm -f examples/faults/read_past_1024.toml
