#!/usr/bin/env bash
# Call 4 on two H100s: the GPU tests of tests/gpu.rs (the killed-worker test now at 8192³), and
# warm SGEMM 4096³ on one device, this build against the session's start, alternating.
set -u
O=$OUT; W=/tmp/d4; rm -rf $W; mkdir -p $W
tar xJf .pack/device.tar.xz
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1)
mkdir -p /tmp/kt-lib; ln -sf $lib /tmp/kt-lib/libnvrtc.so; export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
OUT=$W/check TESTS=.device/tests/gpu timeout 240 bash scripts/gpu-check.sh tests > $W/check.log 2>&1
grep -E '^test |test result|panicked|assert' $W/check/tests.txt | head -20
.device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --no-db > /dev/null 2>&1
for i in 1 2 3; do
  for b in new old; do
    bin=.device/kerntune; [ $b = old ] && bin=.device/old/kerntune
    rm -rf $KERNTUNE_CACHE_DIR/db.sqlite*
    echo "sgemm warm one device $b $i $( { /usr/bin/time -f 'wall %e s' $bin tune benches/sgemm/sgemm.toml --backend cuda --top 1 2>&1 >/dev/null; } | grep '^wall')"
  done
done | tee $W/warm.txt
cd /tmp && tar czf $O/d4.tgz d4
