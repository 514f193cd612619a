// Incoherent dedispersion, in the style of the published dedispersion benchmark: for every
// dispersion measure (DM) and output sample, the sum over frequency channels of the input
// sample delayed by that channel's shift × DM. A C++ template over the sample type
// (KernelTypeNames), with scalar arguments, tile strides, and a channel loop whose unroll
// factor is tuned the way Kernel Tuner does it (`loop_unroll_factor_channel` becomes a
// `constexpr int`, or 0 for no unroll hint).
//
// input[ch][s] holds nr_samples_in samples per channel; output[dm][s] holds nr_samples.

#ifndef nr_channels
#define nr_channels 1024
#endif

template <typename T>
__global__ void __launch_bounds__(block_size_x * block_size_y)
dedispersion_kernel(T *__restrict__ output, const T *__restrict__ input, const float *__restrict__ shifts, int nr_samples, int nr_samples_in,
                    int nr_dms, float dm_first, float dm_step) {
    const int s0 = blockIdx.x * block_size_x * tile_size_x;
    const int d0 = blockIdx.y * block_size_y * tile_size_y;
    int sample[tile_size_x];
    float dm[tile_size_y];
    T acc[tile_size_y][tile_size_x];
#pragma unroll
    for (int tx = 0; tx < tile_size_x; tx++) {
        sample[tx] = tile_stride_x ? s0 + threadIdx.x + tx * block_size_x : s0 + threadIdx.x * tile_size_x + tx;
    }
#pragma unroll
    for (int ty = 0; ty < tile_size_y; ty++) {
        const int d = tile_stride_y ? d0 + threadIdx.y + ty * block_size_y : d0 + threadIdx.y * tile_size_y + ty;
        // Rows past the last DM compute nothing that is stored; they read as DM 0 so that their
        // delays stay inside the input.
        dm[ty] = d < nr_dms ? dm_first + d * dm_step : dm_first;
#pragma unroll
        for (int tx = 0; tx < tile_size_x; tx++) {
            acc[ty][tx] = 0;
        }
    }
#pragma unroll loop_unroll_factor_channel
    for (int ch = 0; ch < nr_channels; ch++) {
        const float shift = shifts[ch];
        const T *row = input + (long long)ch * nr_samples_in;
#pragma unroll
        for (int ty = 0; ty < tile_size_y; ty++) {
            const int delay = (int)(shift * dm[ty]);
#pragma unroll
            for (int tx = 0; tx < tile_size_x; tx++) {
                if (sample[tx] < nr_samples) {
                    acc[ty][tx] += row[sample[tx] + delay];
                }
            }
        }
    }
#pragma unroll
    for (int ty = 0; ty < tile_size_y; ty++) {
        const int d = tile_stride_y ? d0 + threadIdx.y + ty * block_size_y : d0 + threadIdx.y * tile_size_y + ty;
#pragma unroll
        for (int tx = 0; tx < tile_size_x; tx++) {
            if (d < nr_dms && sample[tx] < nr_samples) {
                output[(long long)d * nr_samples + sample[tx]] = acc[ty][tx];
            }
        }
    }
}
