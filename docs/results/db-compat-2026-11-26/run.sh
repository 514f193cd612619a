#!/usr/bin/env bash
# An older kerntune (b150b6c, before the compile_s column) and this one sharing one database,
# on software Vulkan (llvmpipe), 2026-11-26. OLD: built from b150b6c (cargo build --release);
# NEW: this commit. After each step, q.py prints the measurements table's columns, the indexes
# and how the compile_s column stands. Run from the repository root.
set -u
OLD=${OLD:?path to the older kerntune} NEW=${NEW:?path to this kerntune} DB=${DB:-/tmp/compat/db.sqlite}
export KERNTUNE_CACHE_DIR=${KERNTUNE_CACHE_DIR:-/tmp/compat/cache}
here=$(dirname "$0")
step() { echo "== $1"; shift; "$@" 2>&1 | grep -E "^(winner|error|warning)|stored|entries|Error|WARN" | head -5; python3 "$here/q.py" "$DB"; }
step "old tunes N=2^20" $OLD tune examples/triad/triad.toml --db $DB --key N=1048576
step "new tunes N=2^21 (upgrades)" $NEW tune examples/triad/triad.toml --db $DB --key N=2097152
step "old tunes N=2^22 into the upgraded file" $OLD tune examples/triad/triad.toml --db $DB --key N=4194304
step "old db show" $OLD db show --db $DB
step "new tunes N=2^23" $NEW tune examples/triad/triad.toml --db $DB --key N=8388608
step "new finds old's stored winner N=2^22" $NEW tune examples/triad/triad.toml --db $DB --key N=4194304
step "old finds new's stored winner N=2^21" $OLD tune examples/triad/triad.toml --db $DB --key N=2097152
