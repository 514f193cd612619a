#!/usr/bin/env bash
# The session's start build (base, 9430585) against the database written after dispatch + the
# parent's CUDA context made on a thread of its own (new): GPU tests and fault cases with the new
# build, SGEMM cold (fills the compile cache), then warm runs interleaved, then a trace of each.
set -u
O=$OUT; W=/tmp/w1; rm -rf $W; mkdir -p $W
tar xJf .pack/device.tar.xz
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
OUT=$W bash scripts/gpu-check.sh tests
OUT=$W bash scripts/gpu-check.sh faults
SGEMM_WARM=0 OUT=$W bash scripts/gpu-check.sh sgemm
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1); export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
for i in 1 2 3 4 5 6; do
  for b in base new; do
    bin=.device/kerntune; [ $b = base ] && bin=.device/base/kerntune
    rm -rf $KERNTUNE_CACHE_DIR/db.sqlite $KERNTUNE_CACHE_DIR/db.sqlite-*
    /usr/bin/time -f "wall %e s" $bin tune benches/sgemm/sgemm.toml --backend cuda --top 3 > $W/$b-$i.txt 2>&1
  done
done
for b in base new; do
  bin=.device/kerntune; [ $b = base ] && bin=.device/base/kerntune
  rm -rf $KERNTUNE_CACHE_DIR/db.sqlite $KERNTUNE_CACHE_DIR/db.sqlite-*
  NO_COLOR=1 KERNTUNE_LOG=kerntune_core=trace,kerntune_cuda=debug,kerntune=debug,kerntune::autotuning=info /usr/bin/time -f "wall %e s" $bin tune benches/sgemm/sgemm.toml --backend cuda --top 3 > $W/$b-trace.txt 2> $W/$b-trace.log; gzip $W/$b-trace.log
done
cd /tmp && tar czf $O/w1.tgz w1
for f in $W/base-?.txt $W/new-?.txt; do echo "$(basename $f): $(grep -o 'wall time [0-9.]* s' $f) / $(grep -o '^wall [0-9.]* s' $f) / $(grep -o '^winner: [^ ]*' $f)"; done
grep -E "^wall|^exit|^---" $W/sgemm.txt
grep -hE "test result|FAILED|panicked|^exit" $W/tests.txt | head -20
grep -E "^---|^exit" $W/faults.txt
