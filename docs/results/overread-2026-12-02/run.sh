#!/usr/bin/env bash
# First call, on an H200: CUDA buffers now end where their guarded mapping does (start 256-byte
# aligned), so a read one element past a buffer faults while tuning whatever its size.
# - the over-reading `shift` kernel of the memcheck GPU test by hand, at three sizes: 1,048,576
#   floats (faulted before too), 1,000,000 (passed silently before; now faults, diagnosed),
#   1,000,001 (its read lands in the 252 bytes of rounding: passes, and --memcheck says so);
# - Kernel Tuner's published kernels again (specs of docs/results/published-2026-12-02, the .cu
#   files in .kt/): does any read past its buffers now that a read past the end faults?
# - then every GPU suite at this build.
set -u
. scripts/device-env.sh
W=/tmp/overread; rm -rf $W; mkdir -p $W/hand $W/spec
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
H=$W/hand
save() { (cd $W && tar czf $OUT/overread.tgz *.txt hand/*.toml hand/*.cu spec/*.toml 2>/dev/null); }
run() { # label args...
  local label=$1; shift
  echo "== $label"
  t0=$(date +%s.%N)
  $NEW tune "$@" > $W/$label.txt 2>&1; rc=$?
  t1=$(date +%s.%N)
  grep -E "^warning|^winner|^space|^compiled|^error|^failures|^    [0-9]+ ×|^        |^memcheck" $W/$label.txt | cut -c1-900
  echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
}
{
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  printf 'extern "C" __global__ void shift(float* y, const float* x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n    float next = x[i + 1];\n    y[i] = x[i] + (i + 1 < n ? next : 0.0f);\n}\n' > $H/shift.cu
  for n in 1048576 1000000 1000001; do
    printf '[kernel]\nname = "shift"\nsource = { cuda = "shift.cu" }\n[params]\nWG = [128, 256]\n[[problems]]\nn = %s\n[[args]]\nname = "y"\ntype = "f32"\nlen = "n"\naccess = "write"\n[[args]]\nname = "x"\ntype = "f32"\nlen = "n"\ninit = "random"\n[[args]]\nname = "n"\ntype = "i32"\nvalue = "n"\n[launch]\ngrid = ["div_ceil(n, WG)"]\nblock = ["WG"]\n' $n > $H/shift$n.toml
    run shift-$n $H/shift$n.toml --backend cuda --no-db --memcheck
  done
  save
  cp docs/results/published-2026-12-02/*.toml .kt/*.cu .kt/*.npy $W/spec/
  S=$W/spec
  sed 's/__shfl_down(local_y, s)/__shfl_down_sync(0xffffffff, local_y, s)/; s/(blockIdx.x \* block_size_x \* threadIdx.x)/(blockIdx.x * block_size_x + threadIdx.x)/' $S/spmv.cu > $S/spmv_fixed.cu
  sed 's/source = { cuda = "spmv.cu" }/source = { cuda = "spmv_fixed.cu" }/' $S/spmv.toml > $S/spmv_fixed.toml
  sed 's|#include <cub/cub.cuh>|#include <cub/block/block_reduce.cuh>|' $S/expdist.cu > $S/expdist_block.cu
  sed 's/source = { cuda = "expdist.cu" }/source = { cuda = "expdist_block.cu" }/' $S/expdist.toml > $S/expdist_block.toml
  run spmv $S/spmv_fixed.toml --backend cuda --no-db
  run pnpoly $S/pnpoly.toml --backend cuda --budget 150 --seed 1 --no-db
  run zeromean-vertical $S/zeromean_V.toml --backend cuda --no-db
  run zeromean-horizontal $S/zeromean_H.toml --backend cuda --no-db
  run expdist $S/expdist_block.toml --backend cuda --strategy random --budget 48 --seed 1 --compare cost=sum --no-db
  save
  export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
  for t in gpu conformance wgpu-lib open launch; do
    KERNTUNE_CACHE_DIR=$W/suites KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu timeout 200 .device/tests/$t --test-threads=1 > $W/suite-$t.txt 2>&1; echo "$t: exit $?"
    grep -E "^test result|FAILED|panicked" $W/suite-$t.txt | sed "s/^/$t: /" | cut -c1-1500
    save
  done
  KERNTUNE_CACHE_DIR=$W/suites KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu timeout 100 .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
save
cat $W/out.txt
