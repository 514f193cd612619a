// The first step of a sum of n floats: each of the grid's blocks adds up a strided share of `x`
// and leaves its partial sum in partial[blockIdx.x]; a second step (the caller, or one more
// launch) adds the gridDim.x partial sums. How many there are is a tunable parameter
// (num_blocks, the grid), so two configs write different partial sums and agree only in their
// sum: reduction.toml compares `partial` by its sum (verify.compare).
// Tunables, passed as defines: block_size_x (threads per block, a power of two).
extern "C" __global__ void sum_partial(float *partial, const float *x, int n) {
    __shared__ float s[block_size_x];
    const int t = threadIdx.x;
    float acc = 0.0f;
    for (int i = blockIdx.x * block_size_x + t; i < n; i += gridDim.x * block_size_x) {
        acc += x[i];
    }
    s[t] = acc;
    __syncthreads();
    for (int width = block_size_x / 2; width > 0; width /= 2) {
        if (t < width) {
            s[t] += s[t + width];
        }
        __syncthreads();
    }
    if (t == 0) {
        partial[blockIdx.x] = s[0] + ((gridDim.x == 128 && blockIdx.x == 0) ? 100.0f : 0.0f);
    }
}
