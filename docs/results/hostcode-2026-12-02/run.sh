#!/usr/bin/env bash
# First call, on an H200: what NVRTC 13 says of a published kernel's file that holds host code
# or includes the C/C++ standard library (each variant of one kernel tuned through kerntune),
# whether `#ifndef __CUDACC_RTC__` around the host part makes it compile; then the compile-cache
# bound's GPU test and every GPU suite.
set -u
. scripts/device-env.sh
W=/tmp/hostcode; rm -rf $W; mkdir -p $W/hand
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
H=$W/hand
save() { (cd $W && tar czf $OUT/hostcode.tgz *.txt hand/* 2>/dev/null); }
KERNEL='extern "C" __global__ void add(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i] + x[i];
}'
HOST='int main() {
    float *x, *y;
    cudaMalloc(&x, 1024 * sizeof(float));
    cudaMalloc(&y, 1024 * sizeof(float));
    add<<<4, 256>>>(y, x, 1024);
    cudaDeviceSynchronize();
    cudaFree(x);
    cudaFree(y);
    return 0;
}'
variant() { # name, text before the kernel, text after it
  printf '%s\n%s\n%s\n' "$2" "$KERNEL" "$3" > $H/$1.cu
  cat > $H/$1.toml <<TOML
[kernel]
name = "add"
source = { cuda = "$1.cu" }
[params]
WG = [128, 256]
[[problems]]
n = 1048576
[[args]]
name = "y"
type = "f32"
len = "n"
access = "readwrite"
init = "random"
[[args]]
name = "x"
type = "f32"
len = "n"
init = "random"
[[args]]
name = "n"
type = "i32"
value = "n"
[launch]
grid = ["div_ceil(n, WG)"]
block = ["WG"]
TOML
}
variant stdio '#include <stdio.h>' ''
variant cstdio '#include <cstdio>' ''
variant stdlib '#include <stdlib.h>' ''
variant math '#include <math.h>' ''
variant cmath '#include <cmath>' ''
variant assert '#include <assert.h>' ''
variant cstdint '#include <cstdint>' ''
variant iostream '#include <iostream>' ''
variant vector '#include <vector>' ''
variant runtime '#include <cuda_runtime.h>' ''
variant curand '#include <curand_kernel.h>' ''
variant host '' "$HOST"
variant host_runtime '#include <cuda_runtime.h>' "$HOST"
variant vectoradd '#include <stdio.h>
#include <cuda_runtime.h>
#include <helper_cuda.h>' "$HOST"
variant guarded '#ifndef __CUDACC_RTC__
#include <stdio.h>
#include <iostream>
#include <vector>
#endif' "#ifndef __CUDACC_RTC__
$HOST
#endif"
variant stdvector '#include <vector>' 'void fill(std::vector<float>& v) { for (auto& e : v) e = 1.0f; }'
variant hostfn '' 'void init(float* p, int n) { for (int i = 0; i < n; ++i) p[i] = rand() / (float)RAND_MAX; }'
{
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  for v in stdio cstdio stdlib math cmath assert cstdint iostream vector runtime curand host host_runtime vectoradd guarded stdvector hostfn; do
    echo "== $v"
    $NEW tune $H/$v.toml --backend cuda --no-db --top 2 > $W/$v.txt 2>&1; echo "exit $?"
    grep -vE "^(┌|├|╞|└)" $W/$v.txt | cut -c1-1200 | head -30
  done
  save
  echo "== compile cache bound"
  KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda timeout 200 .device/tests/gpu --test-threads=1 --nocapture the_compile_caches_stay_within_their_bound > $W/cache-bound.txt 2>&1; echo "exit $?"
  grep -vE "^(┌|├|╞|└)" $W/cache-bound.txt | cut -c1-700 | tail -40
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
