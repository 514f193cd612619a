#!/usr/bin/env bash
# A kernel worker that cannot open its device says why on its stderr and exits 1 (noworker.c,
# preloaded: it acts only in a process started as a wgpu worker); the tuner's error must hold
# those words. BIN: the kerntune binary (this machine: the build before, then this change).
set -u
BIN=${BIN:-target/release/kerntune}
gcc -shared -fPIC -O2 -o /tmp/noworker.so "$(dirname "$0")/noworker.c"
KERNTUNE_CACHE_DIR=$(mktemp -d) LD_PRELOAD=/tmp/noworker.so timeout 120 $BIN tune examples/triad/triad.toml --backend wgpu --no-db 2>&1 | tail -4
echo "exit ${PIPESTATUS[0]}"
