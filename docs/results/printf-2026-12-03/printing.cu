// The triad (examples/triad/triad.cu) as published kernels leave it: MODE 1 prints a line from
// one thread at each launch (a debug line left in), MODE 2 from every thread (a flood), MODE 3
// asserts something that fails in some configs (WG_SIZE * PER_THREAD <= 1024), MODE 4 the same
// through <assert.h>, as a kernel written for nvcc includes it; MODE 5 prints a line, then
// writes far past `y` (an illegal address) in configs with PER_THREAD = 8.
#ifndef WG_SIZE
#define WG_SIZE 64
#endif
#ifndef PER_THREAD
#define PER_THREAD 1
#endif
#if MODE == 3
extern "C" __device__ void __assertfail(const char* message, const char* file, unsigned line, const char* function, size_t size);
#define assert(e) ((e) ? (void)0 : __assertfail(#e, __FILE__, __LINE__, __func__, 1))
#elif MODE == 4
#include <assert.h>
#endif

extern "C" __global__ void __launch_bounds__(WG_SIZE) triad(const float* __restrict__ x, float* __restrict__ y, float a, unsigned n) {
    const unsigned total = gridDim.x * WG_SIZE;
    const unsigned gid = blockIdx.x * WG_SIZE + threadIdx.x;
#if MODE == 1
    if (gid == 0) printf("triad: n = %u, grid %u x %u\n", n, gridDim.x, WG_SIZE);
#elif MODE == 2
    printf("thread %u of %u\n", gid, total);
#elif MODE == 3 || MODE == 4
    assert(WG_SIZE * PER_THREAD <= 1024);
#elif MODE == 5
    if (gid == 0) printf("triad: about to write y[%u]\n", n + (1u << 30));
    if (PER_THREAD == 8 && gid == 0) y[n + (1u << 30)] = 0.0f;
#endif
#pragma unroll
    for (unsigned k = 0; k < PER_THREAD; k++) {
        const unsigned i = gid + k * total;
        if (i < n) {
            y[i] = a * x[i] + y[i];
        }
    }
}
