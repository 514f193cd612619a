#!/usr/bin/env bash
# The seventy-sixth session's GPU call: a split tune whose shards verify against one config's
# outputs (the shipped T1 GEMM, whose reference is its default config; then the first valid
# config), against a CPU function (the triad), and with a random search; each merged and
# confirmed on the one GPU. Also: verification flags refused before the device opens, and the
# device listing's units. Run through the device tool after `scripts/gpu-check.sh` has unpacked
# .pack (its .device/kerntune is the release binary built with `--features cuda`):
#   bash docs/results/shards-2026-12-07/shards.sh
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
S=$OUT/shards
mkdir -p "$S"
split() { # NAME SPEC "TUNE FLAGS" "VERIFICATION FLAGS": two shards, merged, confirmed
  local name=$1 spec=$2 search=$3 verify=$4
  echo "== $name: shards"
  for k in 0 1; do
    # shellcheck disable=SC2086
    "$BIN" tune "$spec" --backend cuda --shard $k/2 --db "$S/$name-$k.sqlite" --top 3 $search $verify; echo "exit $?"
  done
  "$BIN" db merge "$S/$name-0.sqlite" "$S/$name-1.sqlite" --db "$S/$name.sqlite"; echo "exit $?"
  echo "== $name: confirm"
  # shellcheck disable=SC2086
  "$BIN" confirm "$spec" --backend cuda --db "$S/$name.sqlite" --top 4 $verify; echo "exit $?"
  "$BIN" db show --db "$S/$name.sqlite"; echo "exit $?"
}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  split gemm-default examples/t1/gemm.json "--strategy exhaustive" ""
  split gemm-first examples/t1/gemm.json "--strategy exhaustive" "--reference first-valid"
  split gemm-random examples/t1/gemm.json "--strategy random --budget 40" ""
  split triad-cpu examples/triad/triad.toml "--strategy exhaustive" ""
  echo "== flags that name no output: refused before the device opens"
  time "$BIN" tune examples/triad/triad.toml --backend cuda --no-db --atol q=1e-3; echo "exit $?"
  time "$BIN" tune examples/triad/triad.toml --backend cuda --no-db --reference y=missing.npy; echo "exit $?"
  echo "== another program's SQLite database as --db: refused before the device opens, left as it was"
  python3 -c "import sqlite3; c = sqlite3.connect('$S/app.db'); c.execute('CREATE TABLE users(id INTEGER)'); c.commit()"
  sum_before=$(md5sum < "$S/app.db")
  time "$BIN" tune examples/triad/triad.toml --backend cuda --db "$S/app.db"; echo "exit $?"
  time "$BIN" confirm examples/triad/triad.toml --backend cuda --db "$S/app.db"; echo "exit $?"
  [ "$(md5sum < "$S/app.db")" = "$sum_before" ] && echo "app.db unchanged"
  rm -f "$S/app.db"
  echo "== after a split tune with a budget and confirm, a larger budget searches on"
  "$BIN" tune examples/t1/gemm.json --backend cuda --db "$S/gemm-random.sqlite" --strategy random --budget 60 --seed 1; echo "exit $?"
  echo "== a larger evaluation budget searches on from the stored winner; the same budget is a hit"
  for b in 5 12 12; do
    "$BIN" tune examples/t1/gemm.json --backend cuda --db "$S/more.sqlite" --strategy random --budget $b --seed 1; echo "exit $?"
  done
  rm -f "$S/more.sqlite"
  echo "== devices"
  "$BIN" devices; echo "exit $?"
} > "$OUT/shards.txt" 2>&1
rm -f "$S"/*-[01].sqlite
