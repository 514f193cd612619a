// Half-precision matrix multiply C = A·B for HIP (AMD GPUs): row-major f16 (`__half`) in and
// out, products accumulated in f32: hgemm.wgsl's algorithm in HIP C++, with hgemm.cu's
// parameters (hgemm.cu's WMMA is CUDA's). A block of 32·WARPS_M·WARPS_N threads (4·WARPS_M rows
// of them by 8·WARPS_N columns) computes a BM×BN tile of C, each thread a TM×TN part of it,
// staging BK-wide slices of A and B in shared memory (LDS) as f16. M, N and K must be multiples
// of BM, BN and BK. Compiled for AMD architectures by the tests (never run on an AMD GPU here).
#include <hip/hip_fp16.h>

#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#define TY (4 * WARPS_M)
#define TX (8 * WARPS_N)
#define NT (TX * TY)
#define TM (BM / TY)
#define TN (BN / TX)

extern "C" __global__ void __launch_bounds__(NT) hgemm(const __half* __restrict__ A, const __half* __restrict__ B, __half* __restrict__ C, unsigned M, unsigned N, unsigned K) {
    __shared__ __half As[BK * BM]; // k-major: As[k][m]
    __shared__ __half Bs[BK * BN];
    const unsigned tid = threadIdx.x, ty = tid / TX, tx = tid % TX;
    const size_t row0 = (size_t)blockIdx.y * BM, col0 = (size_t)blockIdx.x * BN;
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;
    for (unsigned k0 = 0; k0 < K; k0 += BK) {
        for (unsigned e = tid; e < BM * BK; e += NT) {
            unsigned r = e / BK, c = e % BK;
            As[c * BM + r] = A[(row0 + r) * K + k0 + c];
        }
        for (unsigned e = tid; e < BK * BN; e += NT) {
            unsigned r = e / BN, c = e % BN;
            Bs[r * BN + c] = B[(size_t)(k0 + r) * N + col0 + c];
        }
        __syncthreads();
#pragma unroll 4
        for (int kk = 0; kk < BK; kk++) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i++) a[i] = __half2float(As[kk * BM + ty + i * TY]);
#pragma unroll
            for (int j = 0; j < TN; j++) b[j] = __half2float(Bs[kk * BN + tx + j * TX]);
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) C[(row0 + ty + i * TY) * N + col0 + tx + j * TX] = __float2half(acc[i][j]);
}
