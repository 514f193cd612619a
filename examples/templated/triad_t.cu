// The triad y = a*x + y as a C++ template: the element type and both tunables are template
// arguments instead of -D defines. The spec names the kernel with its template arguments,
// `triad_t<float, WG_SIZE, PER_THREAD>`; for each config kerntune substitutes the parameters'
// values (`triad_t<float, 256, 4>`), has NVRTC/hipRTC instantiate that, and launches the
// symbol it lowers to. Kernel Tuner's convention.
//
// Parameters are still passed as -D defines too, so template parameters need names of their
// own (BLOCK, ITEMS here): a template parameter called WG_SIZE would become `int 256`.
template <typename T, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) triad_t(const T* __restrict__ x, T* __restrict__ y, T a, unsigned n) {
    const unsigned total = gridDim.x * BLOCK;
    const unsigned gid = blockIdx.x * BLOCK + threadIdx.x;
#pragma unroll
    for (unsigned k = 0; k < ITEMS; k++) {
        const unsigned i = gid + k * total;
        if (i < n) {
            y[i] = a * x[i] + y[i];
        }
    }
}
