#!/usr/bin/env bash
# A time budget that ends random search with configs on the shortlist: is the winner measured
# in full? SGEMM 410 cold (fresh cache directory, CUDA_CACHE_DISABLE=1), 16 compile threads,
# random with --budget 3s and 6s, two seeds each, and hybrid 6s (no shortlist: unchanged).
# Carry .kt (small.tar.xz: the binary and ../shared/bench's files as .device/).
set -u
rm -rf .device; tar xJf .kt/small.tar.xz
. scripts/device-env.sh
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
K=$PWD/.device/kerntune
W=/tmp/fif; rm -rf $W; mkdir -p $W $OUT/runs
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for run in "random 3s 1" "random 3s 2" "random 6s 1" "random 6s 2" "hybrid 6s 1"; do
    set -- $run
    t=$1-$2-$3
    KERNTUNE_CACHE_DIR=$W/$t CUDA_CACHE_DISABLE=1 $K tune benches/sgemm/sgemm.toml --backend cuda -j 16 \
      --strategy $1 --budget $2 --seed $3 --no-db --json > $OUT/runs/$t.json 2> $OUT/runs/$t.err
    echo "$t: exit $?"
    python3 - $OUT/runs/$t.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); r = r[0] if isinstance(r, list) else r
w = r['winner_stats']; one = sum(1 for x in r['results'] if (x.get('stats') or {}).get('samples') == 1)
fin = [s for x in r['results'] for s in x.get('spans') or [] if s['what'] == 'final']
last = max((s['to_s'] for x in r['results'] for s in x.get('spans') or [] if s['what'] != 'final'), default=0)
print(f"  evaluated {r['evaluated']}, {one} of them from one launch; wall {r['wall_seconds']:.2f} s; winner {[v for _, v in r['winner']['params']]} {w['mean']*1e3:.4f} ms, {w['samples']} samples, ci_half {w['ci_half']}")
print(f"  final-round jobs {len(fin)}: {sum(s['to_s'] - s['from_s'] for s in fin):.3f} s of device time, from {min((s['from_s'] for s in fin), default=0):.2f} s (last search job ended {last:.2f} s)")
for n in r['notes']:
    if n.startswith('final round'): print('  note:', n)
PY
  done
} > $OUT/run.txt 2>&1
(cd $OUT && tar czf runs.tgz runs && rm -rf runs)
cat $OUT/run.txt
