// A kernel with a local array written and read at run-time indices (a stack frame), no shared
// memory and no launch bounds.
extern "C" __global__ void local_array(float* y, int k) {
    float a[256];
    for (int i = 0; i < 256; i++) a[(i * k) & 255] = y[i];
    y[threadIdx.x] = a[(k * threadIdx.x) & 255];
}
