// Tiled matrix multiply C = A·B, row-major, f32: the CUDA twin of matmul.wgsl (same parameters,
// same argument order). Each block computes a (WG_Y*TM) x (WG_X*TN) tile of C, staging
// BK-wide slices of A and B in shared memory.
#ifndef WG_X
#define WG_X 16
#endif
#ifndef WG_Y
#define WG_Y 16
#endif
#ifndef TM
#define TM 1
#endif
#ifndef TN
#define TN 1
#endif
#ifndef BK
#define BK 16
#endif
#define BM (WG_Y * TM)
#define BN (WG_X * TN)
#define NT (WG_X * WG_Y)

extern "C" __global__ void __launch_bounds__(NT) matmul(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, unsigned M, unsigned N, unsigned K) {
    __shared__ float As[BK * BM];
    __shared__ float Bs[BK * BN];
    const unsigned tid = threadIdx.y * WG_X + threadIdx.x;
    const unsigned row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;
    for (unsigned k0 = 0; k0 < K; k0 += BK) {
        for (unsigned e = tid; e < BM * BK; e += NT) {
            unsigned r = e / BK, c = e % BK, gr = row0 + r, gc = k0 + c;
            As[c * BM + r] = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : 0.0f;
        }
        for (unsigned e = tid; e < BK * BN; e += NT) {
            unsigned r = e / BN, c = e % BN, gr = k0 + r, gc = col0 + c;
            Bs[r * BN + c] = (gr < K && gc < N) ? B[(size_t)gr * N + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i++) a[i] = As[kk * BM + threadIdx.y + i * WG_Y];
#pragma unroll
            for (int j = 0; j < TN; j++) b[j] = Bs[kk * BN + threadIdx.x + j * WG_X];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; i++) {
        unsigned r = row0 + threadIdx.y + i * WG_Y;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            unsigned c = col0 + threadIdx.x + j * WG_X;
            if (r < M && c < N) C[(size_t)r * N + c] = acc[i][j];
        }
    }
}
