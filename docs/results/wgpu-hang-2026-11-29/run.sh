#!/usr/bin/env bash
# A shader that never ends, kernels in the tuning process (KERNTUNE_WGPU_ISOLATION=0), on an
# H200 through Vulkan: the build before (40946a4: only the queue left undestroyed) against this
# one (pipelines, buffers and the device too), twice each, alternating; then the default (a
# worker process) once; then backend-wgpu/tests/hang.rs (the tune must return within 120 s,
# and the test program must exit).
set -u
O=$OUT
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/hang; rm -rf $W; mkdir -p $W
for i in 1 2; do
  for b in kerntune-before kerntune; do
    rm -rf "$KERNTUNE_CACHE_DIR"
    KERNTUNE_WGPU_ISOLATION=0 KERNTUNE_LOG=kerntune_wgpu=debug timeout 100 /usr/bin/time -f "wall %e s" .device/$b tune examples/faults/hang.toml --backend wgpu --no-db > $W/$b-inproc-$i.txt 2>&1
    echo "$b in-process run $i: exit $? $(grep -h '^wall' $W/$b-inproc-$i.txt)"
  done
done > $W/summary.txt
rm -rf "$KERNTUNE_CACHE_DIR"
timeout 100 /usr/bin/time -f "wall %e s" .device/kerntune tune examples/faults/hang.toml --backend wgpu --no-db > $W/worker.txt 2>&1; echo "kerntune worker: exit $? $(grep -h '^wall' $W/worker.txt)" >> $W/summary.txt
rm -rf "$KERNTUNE_CACHE_DIR"
timeout 150 /usr/bin/time -f "wall %e s" .device/hang --test-threads=1 > $W/hang-test.txt 2>&1; echo "hang.rs: exit $? $(grep -h '^wall' $W/hang-test.txt)" >> $W/summary.txt
cat $W/summary.txt
grep -h "left undestroyed\|^error\|test result\|panicked" $W/*.txt | sort | uniq -c
cd /tmp && tar czf $O/hang.tgz hang
