// The triad y = a*x + y, whose HANG = 1 configs never end: the loop exits only on an input below
// -1, and the inputs are in [0, 1); the volatile store keeps the compiler from removing it (the
// CUDA twin of hang.wgsl). Tunables arrive as -D defines.
#ifndef HANG
#define HANG 0
#endif

extern "C" __global__ void triad(const float* x, float* y, float a, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float y0 = y[i];
    if (HANG == 1) {
        volatile float* v = y;
        while (x[i] >= -1.0f) {
            v[i] = v[i] + 1.0f;
        }
    }
    y[i] = a * x[i] + y0;
}
