#!/usr/bin/env bash
# Issue 24's headline on the kind it names (nvidia-h200-x2, lent late this session): SGEMM 410,
# compile cache warm, database cleared before each run, one GPU against --devices all, at 8192³
# (twice each, alternating) and 4096³.
set -u
O=$OUT; W=/tmp/p4; rm -rf $W; mkdir -p $W
tar xJf .pack/device.tar.xz
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache CUDA_CACHE_PATH=/tmp/nv-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1)
mkdir -p /tmp/kt-lib; ln -sf $lib /tmp/kt-lib/libnvrtc.so; export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
nvidia-smi -L > $W/gpus.txt; nproc >> $W/gpus.txt
run() { # name key devices
  rm -rf $KERNTUNE_CACHE_DIR/db.sqlite*
  /usr/bin/time -f "wall %e s" .device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --key M=$2,N=$2,K=$2 $3 --top 3 --json > $W/$1.json 2> $W/$1.log
  echo "$1 $2 $3 $(grep -h '^wall' $W/$1.log) $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d=d[0] if isinstance(d,list) else d; print(d["winner"], d["winner_stats"]["mean"]*1e3, "ms", d.get("devices"))' $W/$1.json 2>&1 | cut -c1-400)"
}
{
.device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --top 3 --no-db > $W/cold.out 2>&1; echo "cold fill: exit $?"
run a4096-one 4096 "--device 0"
run a4096-all 4096 "--devices all"
for i in 1 2; do
  run b8192-one-$i 8192 "--device 0"
  run b8192-all-$i 8192 "--devices all"
done
} > $W/summary.txt 2>&1
cat $W/gpus.txt $W/summary.txt
cd /tmp && tar czf $O/p4.tgz p4
