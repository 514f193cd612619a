#!/usr/bin/env bash
# Why configs measured during a cold SGEMM tune's compiles read 2-3 % slow (call 3): cold runs
# with `--recheck 20`, the shortlist build (new, 6b50264) and the build before it (flush,
# df0757a) alternating, both compile caches emptied before each; then warm runs of the new
# build without and with 16 busy host threads. The GPU's clocks, power and temperature are
# logged every 100 ms throughout (nvidia-smi), and each run's start and end time.
set -u
O=$OUT; W=/tmp/w4; rm -rf $W; mkdir -p $W
tar xJf .pack/device.tar.xz
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache CUDA_CACHE_PATH=/tmp/nv-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1)
mkdir -p /tmp/kt-lib; ln -sf $lib /tmp/kt-lib/libnvrtc.so; export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $W/smi.csv 2>&1 &
smi=$!
run() { # name binary [extra]
  echo "$1 start $(date +%s.%N)" >> $W/times.txt
  /usr/bin/time -f "wall %e s" $2 tune benches/sgemm/sgemm.toml --backend cuda --no-db --recheck 20 --json > $W/$1.json 2> $W/$1.err
  echo "$1 end $(date +%s.%N)" >> $W/times.txt
}
for i in 1 2; do
  for b in new flush; do
    bin=.device/kerntune; [ $b = flush ] && bin=.device/flush/kerntune
    rm -rf $KERNTUNE_CACHE_DIR $CUDA_CACHE_PATH
    run cold-$b-$i $bin
  done
done
run warm-new-1 .device/kerntune
for k in $(seq 16); do sh -c 'while :; do :; done' & done
sleep 1
run warm-new-loaded .device/kerntune
kill $(jobs -p) 2>/dev/null; wait 2>/dev/null
cd /tmp && tar czf $O/w4.tgz w4
for f in $W/*.json; do python3 - "$f" <<'P'
import json,sys
d=json.load(open(sys.argv[1])); d=d[0] if isinstance(d,list) else d; r=d.get("recheck") or {}
rows=r.get("rows",[])
tie=[x for x in rows if x["tie_band"]]
sh=sorted(abs(x["second"]["mean"]/x["first"]["mean"]-1) for x in rows)
print(sys.argv[1].split('/')[-1], "winner", d["winner"], "rows", len(rows), "inside", r.get("inside"), "tie band", sum(x["inside"] for x in tie), "of", len(tie),
      "median shift %.2f%%" % (100*sh[len(sh)//2]) if sh else "", "largest %.1f%%" % (100*sh[-1]) if sh else "")
for x in sorted(rows,key=lambda x:x["seq"] or 0):
    f,s=x["first"],x["second"]
    print("  seq",x["seq"],"n",f["samples"],"%.4f"%(f["mean"]*1e3),"±%.4f"%((f["ci_half"] or 0)*1e3),"->","%.4f"%(s["mean"]*1e3),"%+.2f%%"%(100*(s["mean"]/f["mean"]-1)),"in" if x["inside"] else "OUT","tie" if x["tie_band"] else "")
P
done
tail -n 1 $W/*.err
