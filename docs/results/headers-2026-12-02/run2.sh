#!/usr/bin/env bash
# Second call, on an H200: the GPU suites at this build (conformance, gpu with the headers test,
# whose edited header now breaks one config by a name and one by a __shared__ array over 48 KiB,
# wgpu unit tests, open, launch, wgpu devices).
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/headers2; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
{
  export KERNTUNE_CACHE_DIR=$W/suites
  KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda .device/tests/gpu --test-threads=1 the_users_headers 2>&1 | grep -E "^test |panicked|^[a-z].*:" | cut -c1-3000
  # The test's steps by hand, for their summaries: the headers as written, a second tune, the
  # header edited, and a tune with --remeasure.
  H=$W/hand; mkdir -p $H/kernels/detail $H/include/ops
  printf '#pragma once\n#include "detail/load.h"\n#define SCALE 2.0f\n#define SCRATCH WG\n' > $H/kernels/tile.h
  printf '#pragma once\n__device__ float load(const float* p, int i) { return p[i]; }\n' > $H/kernels/detail/load.h
  printf '#pragma once\n__device__ float axpy(float a, float x, float y) { return a * x + y; }\n' > $H/include/ops/axpy.cuh
  printf '#include <cuda_fp16.h>\n#include "tile.h"\n#include <ops/axpy.cuh>\nextern "C" __global__ void scale(float* y, const float* x, int n) {\n    __shared__ float scratch[SCRATCH];\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    scratch[threadIdx.x] = i < n ? load(x, i) : 0.0f;\n    __syncthreads();\n    if (i < n) y[i] = axpy(SCALE, scratch[threadIdx.x], 1.0f);\n}\n' > $H/kernels/scale.cu
  printf '[kernel]\nname = "scale"\nsource = { cuda = "kernels/scale.cu" }\noptions = { cuda = ["-Iinclude"] }\n[params]\nWG = [64, 128, 256]\n[[problems]]\nn = 1048576\n[[args]]\nname = "y"\ntype = "f32"\nlen = "n"\naccess = "write"\n[[args]]\nname = "x"\ntype = "f32"\nlen = "n"\ninit = "random"\n[[args]]\nname = "n"\ntype = "i32"\nvalue = "n"\n[launch]\ngrid = ["div_ceil(n, WG)"]\nblock = ["WG"]\n' > $H/scale.toml
  hand() { (cd /tmp && KERNTUNE_CACHE_DIR=$H/cache $NEW tune $H/scale.toml --backend cuda --top 1 "$@" 2>&1 | grep -E "^database hit|^winner|^compiled|^failures|^    [0-9]+ ×|^error" | cut -c1-400; echo "exit ${PIPESTATUS[0]}"); }
  echo "== as written"; hand
  echo "== again"; hand
  printf '#pragma once\n#include "detail/load.h"\n#if WG == 64\n#define SCALE undefined_scale\n#else\n#define SCALE 2.0f\n#endif\n#define SCRATCH (WG == 256 ? 16384 : WG)\n' > $H/kernels/tile.h
  echo "== header edited"; hand
  echo "== --remeasure"; hand --remeasure
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/headers2.tgz *.txt
