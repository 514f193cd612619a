#!/usr/bin/env bash
# Fidelity with the shortlist (6b50264): `--recheck 20` on SGEMM 410 (three times, the first
# with a cold compile cache) and on the triad at 2^28 (once), as in docs/benchmarks.md
# ("Twice in one tune").
set -u
O=$OUT; W=/tmp/w3; rm -rf $W; mkdir -p $W
tar xJf .pack/device.tar.xz
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache CUDA_CACHE_PATH=/tmp/nv-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1)
mkdir -p /tmp/kt-lib; ln -sf $lib /tmp/kt-lib/libnvrtc.so; export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
for i in 1 2 3; do
  /usr/bin/time -f "wall %e s" .device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --no-db --recheck 20 --json > $W/sgemm-recheck-$i.json 2> $W/sgemm-recheck-$i.err
done
/usr/bin/time -f "wall %e s" .device/kerntune tune examples/triad/triad.toml --backend cuda --key N=268435456 --no-db --recheck 20 --json > $W/triad-recheck.json 2> $W/triad-recheck.err
cd /tmp && tar czf $O/w3.tgz w3
for f in $W/*.json; do python3 - "$f" <<'P'
import json,sys
d=json.load(open(sys.argv[1])); d=d[0] if isinstance(d,list) else d; r=d.get("recheck") or {}
rows=r.get("rows",[])
tie=[x for x in rows if x["tie_band"]]
sh=sorted(abs(x["second"]["mean"]/x["first"]["mean"]-1) for x in rows)
print(sys.argv[1].split('/')[-1], "rows", len(rows), "inside", r.get("inside"), "tie band", sum(x["inside"] for x in tie), "of", len(tie),
      "median shift %.2f%%" % (100*sh[len(sh)//2]) if sh else "", "largest %.1f%%" % (100*sh[-1]) if sh else "",
      "first samples", sorted(x["first"]["samples"] for x in rows), "failed", r.get("failed"))
for x in rows:
    if not x["inside"]: print("  outside:", x["config"], x["first"]["samples"], x["first"]["mean"], x["first"]["ci_half"], x["second"]["mean"], "tie" if x["tie_band"] else "")
P
done
tail -n 2 $W/*.err
