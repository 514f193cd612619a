#!/usr/bin/env bash
set -u
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* /usr/local/cuda/lib64/libnvrtc.so.* 2>/dev/null | grep -v alt | head -1)
mkdir -p /tmp/kt-lib && ln -sf "$lib" /tmp/kt-lib/libnvrtc.so
export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname "$lib"):${LD_LIBRARY_PATH:-}
export CUDA_CACHE_DISABLE=1
B=.device/kerntune
mkdir -p $OUT/r
for lvl in 3 2 1 0; do
  sed "s/^options = { cuda = \[\"-std=c++11\"\] }/options = { cuda = [\"-std=c++11\", \"--ptxas-options=-O$lvl\"] }/" examples/convolution/convolution.toml > examples/convolution/conv-O$lvl.toml
  grep -n "^options" examples/convolution/conv-O$lvl.toml >> $OUT/r/options.txt
  export KERNTUNE_CACHE_DIR=/tmp/ktc-$lvl
  /usr/bin/time -f "wall %e s" $B tune examples/convolution/conv-O$lvl.toml --backend cuda --no-db --strategy random --budget 32 --seed 1 --json > $OUT/r/conv-O$lvl.json 2> $OUT/r/conv-O$lvl.err
done
cd $OUT && tar czf r.tgz r && rm -rf r
