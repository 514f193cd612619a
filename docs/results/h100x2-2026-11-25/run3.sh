#!/usr/bin/env bash
# Call 3 on two H100s: as call 2 (run2.sh) with each device taking the shortlisted configs it
# verified first; then `gpu-check.sh usage tests` (CUBIN vs driver resources, cold --recheck both
# ways, the GPU test binaries), everything in one archive.
set -u
O=$OUT; W=/tmp/d3; rm -rf $W; mkdir -p $W
tar xJf .pack/device.tar.xz
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache CUDA_CACHE_PATH=/tmp/nv-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1)
mkdir -p /tmp/kt-lib; ln -sf $lib /tmp/kt-lib/libnvrtc.so; export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
nvidia-smi -L > $W/gpus.txt
run() { # name build key devices
  rm -rf $KERNTUNE_CACHE_DIR/db.sqlite*
  local bin=.device/kerntune; [ $2 = old ] && bin=.device/old/kerntune
  KERNTUNE_LOG=kerntune_core=debug,kerntune=debug,kerntune_cuda=debug /usr/bin/time -f "wall %e s" $bin tune benches/sgemm/sgemm.toml --backend cuda --key M=$3,N=$3,K=$3 $4 --top 3 --json > $W/$1.json 2> $W/$1.log
  echo "$1 $2 $3 $4 $(grep -h '^wall' $W/$1.log) $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d=d[0] if isinstance(d,list) else d; print(d["winner"], d.get("devices"))' $W/$1.json 2>&1 | cut -c1-300)"
}
{
.device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --top 3 --no-db > $W/cold.out 2>&1; echo "cold fill: exit $?"
run a4096-new1 new 4096 "--device 0"
run a4096-new2 new 4096 "--devices all"
run a4096-old2 old 4096 "--devices all"
for i in 1 2; do
  run b8192-new1-$i new 8192 "--device 0"
  run b8192-new2-$i new 8192 "--devices all"
  run b8192-old2-$i old 8192 "--devices all"
done
} > $W/summary.txt 2>&1
cat $W/summary.txt
unset CUDA_CACHE_PATH
OUT=$W/check timeout 300 bash scripts/gpu-check.sh usage tests > $W/check.log 2>&1
cat $W/check/usage.txt | grep -E '^(---|usage:|recheck|winner|wall|exit)' | cut -c1-160
grep -E 'test result|FAILED|panicked' $W/check/tests.txt
cd /tmp && tar czf $O/d3.tgz d3
