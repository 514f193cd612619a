// The triad-like kernel of the compiler-crash check: CRASH changes nothing in the code; the
// shim (nvrtc-shim.c) makes NVRTC abort on any compile with -DCRASH=1.
extern "C" __global__ void scale(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + (float)CRASH * 0.0f;
}
