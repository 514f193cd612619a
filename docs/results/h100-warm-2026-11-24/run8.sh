#!/usr/bin/env bash
# Final build (lazy restore reverted), eight untraced warm runs, each with its database exported.
set -u
O=$OUT; W=/tmp/w8; rm -rf $W; mkdir -p $W
SGEMM_WARM=0 OUT=$W bash scripts/gpu-check.sh sgemm
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1); export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
for i in 1 2 3 4 5 6 7 8; do
  rm -rf $KERNTUNE_CACHE_DIR/db.sqlite $KERNTUNE_CACHE_DIR/db.sqlite-*
  /usr/bin/time -f "wall %e s" .device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --top 3 > $W/final-$i.txt 2>&1
  .device/kerntune db export --out $W/db-$i.json 2>/dev/null; gzip $W/db-$i.json
done
cd /tmp && tar czf $O/w8.tgz w8
for f in $W/final-?.txt; do echo "$(basename $f): $(grep -o 'wall time [0-9.]* s' $f) / $(grep -o '^wall [0-9.]* s' $f) / $(grep -o '^winner: [^ ]*' $f)"; done
for i in 1 2 3 4 5 6 7 8; do zcat $W/db-$i.json.gz | python3 -c "
import json,sys
d=json.load(sys.stdin); m=list(d['entries'].values())[0]['measurements']
v=m['block_size_x=16,block_size_y=8,tile_size_x=8,tile_size_y=8,BK=16']; print($i, v['status'], v['stats'], v.get('trace'))"; done
