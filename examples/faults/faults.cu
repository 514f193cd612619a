// A kernel with planted faults, one per FAULT value, for checking that a tune survives them:
//   FAULT=0  correct (y = 2*x)
//   FAULT=1  does not compile
//   FAULT=2  writes far out of bounds (illegal address: a sticky error that kills the context)
//   FAULT=3  never finishes (infinite loop)
//   FAULT=4  asks for more shared memory than any GPU has (pruned, or fails to launch)
//   FAULT=5  writes a wrong value
//   FAULT=6  skips the last quarter of the output
#ifndef FAULT
#define FAULT 0
#endif
#ifndef WG_SIZE
#define WG_SIZE 128
#endif

extern "C" __global__ void faults(const float* __restrict__ x, float* __restrict__ y, unsigned n) {
    unsigned i = blockIdx.x * WG_SIZE + threadIdx.x;
#if FAULT == 1
    this is not C++;
#elif FAULT == 2
    if (i == 0) y[(size_t)1 << 40] = 1.0f;
#elif FAULT == 3
    // A volatile global load each iteration: the compiler cannot remove the loop, and the
    // inputs are never NaN, so it never ends.
    const volatile float* vx = x;
    while (vx[0] == vx[0]) { }
#elif FAULT == 4
    __shared__ float huge[300 * 1024 / 4];
    huge[threadIdx.x] = x[i % n];
    __syncthreads();
    if (i < n) y[i] = 2.0f * huge[threadIdx.x];
    return;
#endif
#if FAULT == 5
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
#elif FAULT == 6
    if (i < n - n / 4) y[i] = 2.0f * x[i];
#else
    if (i < n) y[i] = 2.0f * x[i];
#endif
}
