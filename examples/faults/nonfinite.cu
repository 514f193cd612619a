// The triad with planted non-finite outputs: PER_THREAD = 2 writes 0/0 (NaN) at element 77, PER_THREAD = 8 an overflow (infinity) at element 5.
// Vector triad y = a*x + y (memory-bound), the CUDA twin of triad.wgsl: same parameters, same
// argument order. Tunables arrive as -D defines: WG_SIZE (threads per block) and PER_THREAD
// (elements per thread, strided by the whole grid so accesses stay coalesced).
#ifndef WG_SIZE
#define WG_SIZE 64
#endif
#ifndef PER_THREAD
#define PER_THREAD 1
#endif

extern "C" __global__ void __launch_bounds__(WG_SIZE) triad(const float* __restrict__ x, float* __restrict__ y, float a, unsigned n) {
    const unsigned total = gridDim.x * WG_SIZE;
    const unsigned gid = blockIdx.x * WG_SIZE + threadIdx.x;
#pragma unroll
    for (unsigned k = 0; k < PER_THREAD; k++) {
        const unsigned i = gid + k * total;
        if (i < n) {
            if (PER_THREAD == 2 && i == 77u) { y[i] = 0.0f / (x[i] - x[i]); } else if (PER_THREAD == 8 && i == 5u) { y[i] = 1e38f * x[i] * 1e38f; } else { y[i] = a * x[i] + y[i]; }
        }
    }
}
