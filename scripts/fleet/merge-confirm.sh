#!/usr/bin/env bash
# The last step of a split tune: merge every shard's database in OUT_DIR into
# OUT_DIR/merged.sqlite, then measure the shards' best configs again on this machine's device
# and store the winner there (kerntune confirm).
#
#   scripts/fleet/merge-confirm.sh SPEC OUT_DIR [more `kerntune confirm` options...]
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 SPEC OUT_DIR [kerntune confirm options...]" >&2
  exit 2
fi
spec=$1
out=$2
shift 2
kt=${KERNTUNE:-kerntune}
shopt -s nullglob
shards=("$out"/shard-*.sqlite)
if [ ${#shards[@]} -eq 0 ]; then
  echo "$0: no shard databases (shard-*.sqlite) in $out" >&2
  exit 1
fi
"$kt" db merge "${shards[@]}" --db "$out/merged.sqlite"
exec "$kt" confirm "$spec" --db "$out/merged.sqlite" "$@"
