// A shared-memory tiled SGEMM, C = A·B (row-major, M × K times K × N): each block of
// block_size_x × block_size_y threads computes a (block_size_y·tile_size_y) ×
// (block_size_x·tile_size_x) tile of C, stepping through K in slices of BK. C++ linkage.

#define BM (block_size_y * tile_size_y)
#define BN (block_size_x * tile_size_x)

__global__ void __launch_bounds__(block_size_x * block_size_y)
gemm_kernel(float *C, const float *__restrict__ A, const float *__restrict__ B, int M, int N, int K) {
    __shared__ float As[BK][BM + 1];
    __shared__ float Bs[BK][BN];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * block_size_x + tx;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[tile_size_y][tile_size_x];
#pragma unroll
    for (int i = 0; i < tile_size_y; i++) {
#pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
            acc[i][j] = 0.0f;
        }
    }
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = tid; i < BM * BK; i += block_size_x * block_size_y) {
            const int r = i / BK, c = i % BK;
            const int gr = row0 + r, gc = k0 + c;
            As[c][r] = (gr < M && gc < K) ? A[(long long)gr * K + gc] : 0.0f;
        }
        for (int i = tid; i < BK * BN; i += block_size_x * block_size_y) {
            const int r = i / BN, c = i % BN;
            const int gr = k0 + r, gc = col0 + c;
            Bs[r][c] = (gr < K && gc < N) ? B[(long long)gr * N + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float a[tile_size_y], b[tile_size_x];
#pragma unroll
            for (int i = 0; i < tile_size_y; i++) {
                a[i] = As[kk][ty + i * block_size_y];
            }
#pragma unroll
            for (int j = 0; j < tile_size_x; j++) {
                b[j] = Bs[kk][tx + j * block_size_x];
            }
#pragma unroll
            for (int i = 0; i < tile_size_y; i++) {
#pragma unroll
                for (int j = 0; j < tile_size_x; j++) {
                    acc[i][j] += a[i] * b[j];
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < tile_size_y; i++) {
#pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
            const int r = row0 + ty + i * block_size_y, c = col0 + tx + j * block_size_x;
            if (r < M && c < N) {
                C[(long long)r * N + c] = acc[i][j];
            }
        }
    }
}
