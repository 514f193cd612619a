// A 2-D convolution (correlation) of an image with a filter held in constant memory, written
// the way Kernel Tuner's published kernels are: tunables arrive as defines (block_size_x/y,
// tile_size_x/y, use_padding, read_only, use_shmem, filter_width/height), the filter lives in a
// `__constant__` array the tuner fills, and the kernel is plain C++ (no `extern "C"`), so it is
// launched by its mangled name.
//
// output[y][x] = sum_{j,i} input[y + j][x + i] * d_filter[j][i], for an output of
// image_width × image_height and an input padded by filter_width-1 / filter_height-1.

#ifndef image_width
#define image_width 4096
#endif
#ifndef image_height
#define image_height 4096
#endif
#ifndef filter_width
#define filter_width 15
#endif
#ifndef filter_height
#define filter_height 15
#endif
#ifndef use_padding
#define use_padding 0
#endif
#ifndef read_only
#define read_only 0
#endif
// Stage the block's input window in shared memory (1), or read every tap from global memory
// (0; through the read-only cache with read_only). benchmark_hub's space tunes it.
#ifndef use_shmem
#define use_shmem 1
#endif

#define input_width (image_width + filter_width - 1)
#define tile_w (block_size_x * tile_size_x + filter_width - 1)
#define tile_h (block_size_y * tile_size_y + filter_height - 1)
// One column of padding breaks shared-memory bank conflicts when a row's length is a multiple
// of 32.
#if use_padding
#define tile_stride (tile_w + 1)
#else
#define tile_stride tile_w
#endif

__constant__ float d_filter[filter_width * filter_height];

#if read_only
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

__global__ void __launch_bounds__(block_size_x * block_size_y)
convolution_kernel(float *output, const float *__restrict__ input, const float *filter) {
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int bx = blockIdx.x * block_size_x * tile_size_x;
    const int by = blockIdx.y * block_size_y * tile_size_y;

#if use_shmem
    // Stage the block's input window (with its halo) in shared memory.
    __shared__ float tile[tile_h * tile_stride];
    for (int j = ty; j < tile_h; j += block_size_y) {
        for (int i = tx; i < tile_w; i += block_size_x) {
            const int gy = by + j, gx = bx + i;
            float v = 0.0f;
            if (gy < image_height + filter_height - 1 && gx < input_width) {
                v = LOAD(&input[gy * input_width + gx]);
            }
            tile[j * tile_stride + i] = v;
        }
    }
    __syncthreads();
// Tap (j, i) of tile element (ty2, tx2).
#define TAP(ty2, tx2, j, i) tile[(ty + (ty2) * block_size_y + (j)) * tile_stride + tx + (tx2) * block_size_x + (i)]
#else
// Straight from the padded input; an element past the image's edge (a grid that overshoots
// it) reads its last row or column instead, and is not written.
#define TAP(ty2, tx2, j, i) \
    LOAD(&input[(min(by + ty + (ty2) * block_size_y, image_height - 1) + (j)) * input_width + min(bx + tx + (tx2) * block_size_x, image_width - 1) + (i)])
#endif

    float sum[tile_size_y][tile_size_x];
#pragma unroll
    for (int ty2 = 0; ty2 < tile_size_y; ty2++) {
#pragma unroll
        for (int tx2 = 0; tx2 < tile_size_x; tx2++) {
            sum[ty2][tx2] = 0.0f;
        }
    }
    // Fully unrolled: every tap of every tile element is its own instruction, which is what
    // makes this kernel slow to compile (and fast to run).
#pragma unroll
    for (int j = 0; j < filter_height; j++) {
#pragma unroll
        for (int i = 0; i < filter_width; i++) {
            const float f = d_filter[j * filter_width + i];
#pragma unroll
            for (int ty2 = 0; ty2 < tile_size_y; ty2++) {
#pragma unroll
                for (int tx2 = 0; tx2 < tile_size_x; tx2++) {
                    sum[ty2][tx2] += TAP(ty2, tx2, j, i) * f;
                }
            }
        }
    }
#pragma unroll
    for (int ty2 = 0; ty2 < tile_size_y; ty2++) {
#pragma unroll
        for (int tx2 = 0; tx2 < tile_size_x; tx2++) {
            const int y = by + ty + ty2 * block_size_y, x = bx + tx + tx2 * block_size_x;
            if (y < image_height && x < image_width) {
                output[y * image_width + x] = sum[ty2][tx2];
            }
        }
    }
}
