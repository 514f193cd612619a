#!/usr/bin/env bash
# Call 2 on two H100s: --device 0 against --devices all, this build (new: the shortlist on every
# device, the tuner's own CUDA contexts made only when used) against the session's start (old,
# ba0c728), interleaved; compile cache warm, database cleared before each run.
set -u
O=$OUT; W=/tmp/d2; rm -rf $W; mkdir -p $W
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
  KERNTUNE_LOG=kerntune_core=debug,kerntune=debug,kerntune_cuda=debug /usr/bin/time -f "wall %e s" $bin tune benches/sgemm/sgemm.toml --backend cuda --key M=$3,N=$3,K=$3 $4 --top 3 > $W/$1.out 2> $W/$1.log
  echo "$1 $2 $3 $4 $(grep -h '^wall' $W/$1.log) $(grep -h '^winner' $W/$1.out | cut -c1-80)"
}
{
.device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --top 3 --no-db > $W/cold.out 2>&1; echo "cold fill: exit $?"
for i in 1 2; do
  run a4096-new1-$i new 4096 "--device 0"
  run a4096-new2-$i new 4096 "--devices all"
  run a4096-old2-$i old 4096 "--devices all"
  run a4096-old1-$i old 4096 "--device 0"
done
run b8192-new1 new 8192 "--device 0"
run b8192-new2-1 new 8192 "--devices all"
run b8192-old2 old 8192 "--devices all"
run b8192-new2-2 new 8192 "--devices all"
for b in new old; do
  bin=.device/kerntune; [ $b = old ] && bin=.device/old/kerntune
  for d in "--device 0" "--devices all"; do
    echo "triad $b $d $( { /usr/bin/time -f 'wall %e s' $bin tune examples/triad/triad.toml --backend cuda --key N=268435456 --no-db $d --top 1 2>&1 >/dev/null; } | grep '^wall')"
  done
done
} > $W/summary.txt 2>&1
cat $W/summary.txt
cd /tmp && tar czf $O/d2.tgz d2
