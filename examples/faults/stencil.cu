// Kernels for the published-kernel failure cases (see the .toml files beside this one).
//
// `heat` is a 2-D five-point heat step written for an input padded with a halo of R cells on
// every side: (nx + 2R) x (ny + 2R) elements. A spec that sizes the input for the grid alone
// (nx x ny, as a published T1 file did) makes every launch read past its end (read_past.toml).
//
// `smooth` applies STEPS smoothing steps in registers, a temporal-tiling kernel whose output
// depends on STEPS by design (by_design.toml).
#ifndef R
#define R 4
#endif
#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 8
#endif
#ifndef STEPS
#define STEPS 1
#endif

extern "C" __global__ void heat(float* __restrict__ out, const float* __restrict__ in, int nx, int ny) {
    int x = blockIdx.x * block_size_x + threadIdx.x;
    int y = blockIdx.y * block_size_y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    const int pitch = nx + 2 * R;
    const float* c = in + (y + R) * pitch + (x + R);
    out[y * nx + x] = 0.5f * c[0] + 0.125f * (c[-R] + c[R] + c[-R * pitch] + c[R * pitch]);
}

extern "C" __global__ void smooth(float* __restrict__ y, const float* __restrict__ x, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float l = i > 0 ? x[i - 1] : v;
    float r = i + 1 < n ? x[i + 1] : v;
    for (int s = 0; s < STEPS; ++s) {
        v = 0.5f * v + 0.25f * (l + r);
    }
    y[i] = v;
}
