// A 2-D five-point stencil over a padded grid (one halo cell on each side):
// out[y][x] = c_center·in[y+1][x+1] + c_side·(in[y][x+1] + in[y+2][x+1] + in[y+1][x] + in[y+1][x+2]).
// Each thread computes tile_size_y rows of one column. C++ linkage.

__global__ void __launch_bounds__(block_size_x * block_size_y)
stencil_kernel(float *out, const float *__restrict__ in, int width, int height, float c_center, float c_side) {
    const int x = blockIdx.x * block_size_x + threadIdx.x;
    const int y0 = blockIdx.y * block_size_y * tile_size_y + threadIdx.y;
    const int pitch = width + 2;
    if (x >= width) {
        return;
    }
#pragma unroll
    for (int t = 0; t < tile_size_y; t++) {
        const int y = y0 + t * block_size_y;
        if (y < height) {
            const float *c = in + (long long)(y + 1) * pitch + (x + 1);
            out[(long long)y * width + x] = c_center * c[0] + c_side * (c[-pitch] + c[pitch] + c[-1] + c[1]);
        }
    }
}
