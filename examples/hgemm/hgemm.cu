// Half-precision matrix multiply on tensor cores, C = A·B: A (M×K), B (K×N) and C (M×N) are
// row-major f16 (`__half`), or bf16 (`__nv_bfloat16`, sm_80 and later) with -DUSE_BF16
// (hgemm_bf16.toml); products accumulate in f32 (WMMA 16×16×16 fragments) and C is rounded to
// the element type once. Each block computes a BM×BN tile of C with WARPS_M×WARPS_N warps, each
// warp a (BM/WARPS_M)×(BN/WARPS_N) part of it, staging BK-wide slices of A and B in shared
// memory. M, N and K must be multiples of BM, BN and BK (the spec's restrictions say so).
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;
#ifdef USE_BF16
#include <cuda_bf16.h>
typedef __nv_bfloat16 elem;
#define TO_ELEM __float2bfloat16_rn
#else
typedef __half elem;
#define TO_ELEM __float2half_rn
#endif

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
#define NT (32 * WARPS_M * WARPS_N)
#define WM (BM / WARPS_M) // rows of C per warp
#define WN (BN / WARPS_N) // columns of C per warp
#define FM (WM / 16)      // fragments per warp, down
#define FN (WN / 16)      // and across
// Rows padded by 8 halves (16 bytes): fewer shared-memory bank conflicts, 16-byte alignment kept.
#define LDA (BK + 8)
#define LDB (BN + 8)

extern "C" __global__ void __launch_bounds__(NT) hgemm(const elem* __restrict__ A, const elem* __restrict__ B, elem* __restrict__ C, unsigned M, unsigned N, unsigned K) {
    __shared__ __align__(32) elem As[BM * LDA];
    __shared__ __align__(32) elem Bs[BK * LDB];
    __shared__ __align__(32) float Cs[NT / 32][16 * 16];
    const unsigned tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const unsigned wm = warp / WARPS_N, wn = warp % WARPS_N;
    const size_t row0 = (size_t)blockIdx.y * BM, col0 = (size_t)blockIdx.x * BN;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++) wmma::fill_fragment(acc[i][j], 0.0f);

    for (unsigned k0 = 0; k0 < K; k0 += BK) {
        // Eight halves (16 bytes) a thread per step.
        for (unsigned e = tid; e < BM * BK / 8; e += NT) {
            unsigned r = e / (BK / 8), c = (e % (BK / 8)) * 8;
            *(uint4*)&As[r * LDA + c] = *(const uint4*)&A[(row0 + r) * K + k0 + c];
        }
        for (unsigned e = tid; e < BK * BN / 8; e += NT) {
            unsigned r = e / (BN / 8), c = (e % (BN / 8)) * 8;
            *(uint4*)&Bs[r * LDB + c] = *(const uint4*)&B[(size_t)(k0 + r) * N + col0 + c];
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, elem, wmma::row_major> a[FM];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, elem, wmma::row_major> b[FN];
#pragma unroll
            for (int i = 0; i < FM; i++) wmma::load_matrix_sync(a[i], &As[(wm * WM + i * 16) * LDA + kk], LDA);
#pragma unroll
            for (int j = 0; j < FN; j++) wmma::load_matrix_sync(b[j], &Bs[kk * LDB + wn * WN + j * 16], LDB);
#pragma unroll
            for (int i = 0; i < FM; i++)
#pragma unroll
                for (int j = 0; j < FN; j++) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    // Each fragment through the warp's staging tile, rounded to the element type on the way out.
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++) {
            wmma::store_matrix_sync(Cs[warp], acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            for (unsigned e = lane; e < 256; e += 32) {
                size_t r = row0 + wm * WM + i * 16 + e / 16, c = col0 + wn * WN + j * 16 + e % 16;
                C[r * N + c] = TO_ELEM(Cs[warp][e]);
            }
            __syncwarp();
        }
}
