// A published kernel as its author debugged it: a line printed at every launch (device printf)
// and an assertion its author relied on, which fails where a block covers more than 1024
// elements. NVRTC has no <assert.h>: kerntune supplies one (see docs/spec.md), so a kernel
// written for nvcc that includes it compiles unchanged.
#include <assert.h>

#ifndef WG_SIZE
#define WG_SIZE 64
#endif
#ifndef PER_THREAD
#define PER_THREAD 1
#endif

extern "C" __global__ void triad(const float* __restrict__ x, float* __restrict__ y, float a, unsigned n) {
    const unsigned total = gridDim.x * WG_SIZE;
    const unsigned gid = blockIdx.x * WG_SIZE + threadIdx.x;
    if (gid == 0) {
        printf("triad: n = %u, %u blocks of %u threads\n", n, (unsigned)gridDim.x, (unsigned)WG_SIZE);
    }
    assert(WG_SIZE * PER_THREAD <= 1024);
    for (unsigned k = 0; k < PER_THREAD; k++) {
        const unsigned i = gid + k * total;
        if (i < n) {
            y[i] = a * x[i] + y[i];
        }
    }
}
