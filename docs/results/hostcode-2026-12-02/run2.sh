#!/usr/bin/env bash
# Second call, on an H200, with the hints: the first call's variants again (what each error now
# says), libcu++'s `<cuda/std/…>` headers the hints name (do they compile through NVRTC with
# kerntune's include path?), a header of the user's with a helper lacking `__device__`; the
# fortieth session's macro-expanded kernel (10^L statements) with --compile-timeout 5s, now
# bounding each compile's own CPU time (before: 7 of 8 timed out, the small L = 2 ones too);
# then the new GPU tests and every GPU suite.
set -u
. scripts/device-env.sh
W=/tmp/hostcode2; rm -rf $W; mkdir -p $W/hand
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
H=$W/hand
save() { (cd $W && tar czf $OUT/hostcode2.tgz *.txt hand/* 2>/dev/null); }
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
variant cuda_std_cstdint '#include <cuda/std/cstdint>' '__global__ void k2(cuda::std::int64_t* p) { p[0] = 1; }'
variant cuda_std_traits '#include <cuda/std/type_traits>
#include <cuda/std/limits>
#include <cuda/std/climits>
#include <cuda/std/cfloat>
#include <cuda/std/utility>
#include <cuda/std/tuple>
#include <cuda/std/array>
#include <cuda/std/complex>
#include <cuda/std/atomic>
#include <cuda/std/cassert>
#include <cuda/std/cstddef>' 'static_assert(cuda::std::is_same<float, float>::value, "");'
printf 'float twice(float v) { return 2.0f * v; }\n' > $H/helper.h
variant helper '#include "helper.h"' '__global__ void k3(float* p) { p[0] = twice(p[0]); }'
variant stdvector '#include <vector>' 'void fill(std::vector<float>& v) { for (auto& e : v) e = 1.0f; }'
variant hostfn '' 'void init(float* p, int n) { for (int i = 0; i < n; ++i) p[i] = rand() / (float)RAND_MAX; }'
{
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  for v in stdio cstdio stdlib math cmath assert cstdint iostream vector runtime curand host host_runtime vectoradd guarded stdvector hostfn cuda_std_cstdint cuda_std_traits helper; do
    echo "== $v"
    $NEW tune $H/$v.toml --backend cuda --no-db --top 2 > $W/$v.txt 2>&1; echo "exit $?"
    grep -vE "^(┌|├|╞|└)" $W/$v.txt | cut -c1-1200 | head -30
  done
  save
  echo "== rep, --compile-timeout 5s (CPU time)"
  tar xzf docs/results/overread-2026-12-02/call3.tgz -C $W hand/rep.cu hand/rep.toml
  t0=$(date +%s.%N)
  $NEW tune $H/rep.toml --backend cuda --no-db --compile-timeout 5s --top 8 > $W/rep-timeout.txt 2>&1; rc=$?
  t1=$(date +%s.%N)
  grep -vE "^(┌|├|╞|└)" $W/rep-timeout.txt | cut -c1-900
  echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
  save
  for t in the_compile_caches_stay_within_their_bound a_published_file_with_host_code_says_how_to_keep_it; do
    echo "== $t"
    KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda timeout 200 .device/tests/gpu --test-threads=1 --nocapture $t > $W/$t.txt 2>&1; echo "exit $?"
    grep -vE "^(┌|├|╞|└)" $W/$t.txt | cut -c1-700 | tail -30
  done
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
