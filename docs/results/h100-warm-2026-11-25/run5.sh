#!/usr/bin/env bash
# Experiment: cold SGEMM with --recheck 20, the parent loading each compiled module into its own
# CUDA context for its resource usage (as now) or not (KERNTUNE_EXP_NO_PARENT_LOAD=1), alternating.
set -u
O=$OUT; W=/tmp/w5; rm -rf $W; mkdir -p $W
tar xJf .pack/device.tar.xz
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache CUDA_CACHE_PATH=/tmp/nv-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1)
mkdir -p /tmp/kt-lib; ln -sf $lib /tmp/kt-lib/libnvrtc.so; export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
for i in 1 2 3; do
  for b in load noload; do
    rm -rf $KERNTUNE_CACHE_DIR $CUDA_CACHE_PATH
    if [ $b = noload ]; then export KERNTUNE_EXP_NO_PARENT_LOAD=1; else unset KERNTUNE_EXP_NO_PARENT_LOAD; fi
    /usr/bin/time -f "wall %e s" .device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --no-db --recheck 20 --json > $W/cold-$b-$i.json 2> $W/cold-$b-$i.err
  done
done
cd /tmp && tar czf $O/w5.tgz w5
for f in $W/*.json; do python3 - "$f" <<'P'
import json,sys
d=json.load(open(sys.argv[1])); d=d[0] if isinstance(d,list) else d; r=d.get("recheck") or {}
rows=r.get("rows",[])
tie=[x for x in rows if x["tie_band"]]
sh=sorted(abs(x["second"]["mean"]/x["first"]["mean"]-1) for x in rows)
full=[x for x in rows if x["first"]["samples"]>3]
print(sys.argv[1].split('/')[-1], "rows", len(rows), "inside", r.get("inside"), "tie", sum(x["inside"] for x in tie), "of", len(tie),
      "median %.2f%%" % (100*sh[len(sh)//2]) if sh else "", "largest %.1f%%" % (100*sh[-1]) if sh else "",
      "| >3 samples:", " ".join("%d:%+.2f%%" % (x["first"]["samples"], 100*(x["second"]["mean"]/x["first"]["mean"]-1)) for x in full), "| wall_s %.2f" % d["wall_seconds"], "pruned_after", len(d.get("pruned_after") or []))
P
done
tail -qn 1 $W/*.err
