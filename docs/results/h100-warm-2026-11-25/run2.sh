#!/usr/bin/env bash
# The shortlist (new) against the session's start build (base, 9430585) and the database written
# after dispatch alone (flush, df0757a): GPU tests, CUDA smoke tunes and fault cases with the new
# build; SGEMM cold (fills the compile cache), then warm runs interleaved, each run's database
# exported; a trace of the new build.
set -u
O=$OUT; W=/tmp/w2; rm -rf $W; mkdir -p $W
tar xJf .pack/device.tar.xz
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
OUT=$W bash scripts/gpu-check.sh tests
OUT=$W bash scripts/gpu-check.sh cuda faults
SGEMM_WARM=0 OUT=$W bash scripts/gpu-check.sh sgemm
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1); export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
for i in 1 2 3 4 5 6; do
  for b in base flush new; do
    bin=.device/kerntune; [ $b != new ] && bin=.device/$b/kerntune
    rm -rf $KERNTUNE_CACHE_DIR/db.sqlite $KERNTUNE_CACHE_DIR/db.sqlite-*
    /usr/bin/time -f "wall %e s" $bin tune benches/sgemm/sgemm.toml --backend cuda --top 3 > $W/$b-$i.txt 2>&1
    [ $b = new ] && { .device/kerntune db export --out $W/new-db-$i.json 2>/dev/null; gzip $W/new-db-$i.json; }
  done
done
rm -rf $KERNTUNE_CACHE_DIR/db.sqlite $KERNTUNE_CACHE_DIR/db.sqlite-*
NO_COLOR=1 KERNTUNE_LOG=kerntune_core=trace,kerntune_cuda=debug,kerntune=debug,kerntune::autotuning=info /usr/bin/time -f "wall %e s" .device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --top 3 > $W/new-trace.txt 2> $W/new-trace.log; gzip $W/new-trace.log
cd /tmp && tar czf $O/w2.tgz w2
for b in base flush new; do for f in $W/$b-?.txt; do echo "$(basename $f): $(grep -o 'wall time [0-9.]* s' $f) / $(grep -o '^wall [0-9.]* s' $f) / $(grep -o '^winner: [^ ]*' $f)"; done; done
grep -E "^wall|^exit|^---" $W/sgemm.txt
grep -hE "test result|FAILED|panicked|^exit" $W/tests.txt | head -20
grep -E "^---|^exit|^winner" $W/cuda-tune.txt $W/faults.txt
