#!/usr/bin/env bash
# A database whose disk fills during a CUDA tune (the sixty-second session's last GPU call):
# the convolution, random 50, cold, with --db on a 300 KiB tmpfs that a `dd` fills 5 s in; then
# the file the tune kept merged once the space is freed, and the same tune again (a database
# hit). Needs root for the tmpfs (skipped otherwise). Then the damaged-cache call again at this
# build (docs/results/cache-damage-2026-12-06/run.sh, which runs the GPU suites).
# Same build and carry as that script. Output: $OUT/disk.txt, $OUT/cache.txt, $OUT/all.tgz.
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
S=/tmp/small; mkdir -p $S
{
  if mount -t tmpfs -o size=300k tmpfs $S 2>/dev/null; then
    rm -f /tmp/kerntune-unsaved-*
    export KERNTUNE_CACHE_DIR=/tmp/fd-cache CUDA_CACHE_PATH=/tmp/fd-nv
    $BIN tune examples/triad/triad.toml --backend cuda --db $S/db.sqlite --budget 3 > /dev/null 2>&1
    (sleep 5; dd if=/dev/zero of=$S/fill bs=1k 2>/dev/null; echo "disk filled at 5 s") &
    timeout 200 $BIN tune examples/convolution/convolution.toml --backend cuda --db $S/db.sqlite --strategy random --budget 50 --seed 1 > /tmp/disk-tune.txt 2>&1
    echo "== tune: exit $?"; wait
    sed 's/\x1b\[[0-9;]*m//g' /tmp/disk-tune.txt | grep -E "WARN|^winner|^space|^database|^error" | cut -c1-600
    rm -f $S/fill
    f=$(ls /tmp/kerntune-unsaved-* 2>/dev/null | head -1)
    echo "kept: ${f:-none}"
    [ -n "$f" ] && $BIN db merge $f --db $S/db.sqlite
    $BIN db show --db $S/db.sqlite | cut -c1-250
    timeout 100 $BIN tune examples/convolution/convolution.toml --backend cuda --db $S/db.sqlite --strategy random --budget 50 --seed 1 2>&1 | grep -E "^database|^winner" | cut -c1-300
    umount $S
  else
    echo "no tmpfs (not root): full-disk part skipped"
  fi
} 2>&1 | tee $OUT/disk.txt
bash docs/results/cache-damage-2026-12-06/run.sh > /dev/null 2>&1
(cd /tmp && tar czf $OUT/disk.tgz disk-tune.txt 2>/dev/null)
