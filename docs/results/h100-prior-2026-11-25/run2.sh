#!/usr/bin/env bash
# The GPU test binaries at this session's final code (database read-only fallback, priors
# lookup, forest), on two H100s; and the few-shot SGEMM tune with the H200's cache over both GPUs.
set -u
O=$OUT; W=/tmp/p2; rm -rf $W; mkdir -p $W
tar xJf .pack/device.tar.xz
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
nvidia-smi -L > $W/gpus.txt
OUT=$W/check timeout 420 bash scripts/gpu-check.sh tests > $W/check.log 2>&1; echo "gpu-check: exit $?"
grep -E '^---|test result|FAILED|panicked|^exit' $W/check/tests.txt
export KERNTUNE_CACHE_DIR=/tmp/kc2; rm -rf $KERNTUNE_CACHE_DIR
lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* | grep -v alt | head -1)
mkdir -p /tmp/kt-lib; ln -sf $lib /tmp/kt-lib/libnvrtc.so; export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname $lib)
.device/kerntune tune benches/sgemm/sgemm.toml --backend cuda --devices all --budget 10 --prior .device/bench/h200_sgemm_410.json > $W/prior-devices.txt 2>&1; echo "prior over both GPUs: exit $?"
grep -E '^prior|^winner|strategy|devices|space' $W/prior-devices.txt
cd /tmp && tar czf $O/p2.tgz p2
