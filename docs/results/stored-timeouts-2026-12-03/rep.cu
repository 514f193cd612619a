#define S a = a * 0.9999f + __sinf(a + (float)k); ++k;
#define R10(s) s s s s s s s s s s
extern "C" __global__ void rep(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i];
    int k = 0;
#if L == 2
    R10(R10(S))
#elif L == 3
    R10(R10(R10(S)))
#elif L == 4
    R10(R10(R10(R10(S))))
#else
    R10(R10(R10(R10(R10(S)))))
#endif
    y[i] = a;
}
