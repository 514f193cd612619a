// How much does each way of emptying L2 between timed launches disturb the launch it precedes?
// Issue 4 asks to measure kerntune's 2×L2 memset flush against rotating inputs. This program
// times one memory-bound kernel (the triad, y = a*x + y) with CUDA events, launch by launch,
// in four modes:
//   warm    no flush: the previous launch leaves x and y in L2 where they fit;
//   memset  cudaMemsetAsync over a 2×L2 buffer before each launch (what kerntune's CUDA and
//           HIP backends do): L2 is left full of *dirty* lines that the timed launch must
//           write back as it evicts them;
//   read    a kernel that reads a 2×L2 buffer before each launch: L2 is left full of clean
//           lines, which cost nothing to evict;
//   rotate  K copies of x and y spanning at least 2×L2; launch i uses copy i mod K, so its
//           data were evicted by the launches in between and nothing else runs.
// The reference for "cold" is rotate: no extra work is queued between launches. A mode that
// reads slower than rotate adds its own traffic to the measurement.
//
// Build and run (on the GPU machine; scripts/gpu-check.sh l2flush does this):
//   nvcc -O3 -arch=native -o l2flush l2flush.cu && ./l2flush
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t check_ = (x); if (check_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(check_)); exit(1); } } while (0)

__global__ void triad(const float* __restrict__ x, float* __restrict__ y, float a, unsigned n) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = a * x[i] + y[i];
}

__global__ void read_flush(const float4* __restrict__ buf, size_t n, float* sink) {
    float acc = 0.f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = buf[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 12345.f) *sink = acc;  // never true; keeps the loads
}

int main() {
    int dev = 0, sms = 0, l2 = 0;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    const size_t flush_bytes = 2 * (size_t)l2;
    printf("%s: %d SMs, L2 %.1f MB; flush buffer %.1f MB\n", prop.name, sms, l2 / 1e6, flush_bytes / 1e6);
    char* flush;
    float* sink;
    CHECK(cudaMalloc(&flush, flush_bytes));
    CHECK(cudaMemset(flush, 1, flush_bytes));
    CHECK(cudaMalloc(&sink, sizeof(float)));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    const int reps = 50, block = 256, grid = sms * 8;
    const char* modes[] = {"warm", "memset", "read", "rotate"};
    printf("%-12s %10s %10s %10s %10s %10s   (median us per launch; GB/s = 12 bytes/element)\n", "N", "traffic MB", "warm", "memset", "read", "rotate");
    for (unsigned logn = 16; logn <= 26; logn += 2) {
        const unsigned n = 1u << logn;
        const size_t bytes = 2 * (size_t)n * sizeof(float);
        const int copies = std::max<size_t>(2, (flush_bytes + bytes - 1) / bytes + 1);
        std::vector<float*> xs(copies), ys(copies);
        for (int c = 0; c < copies; c++) {
            CHECK(cudaMalloc(&xs[c], n * sizeof(float)));
            CHECK(cudaMalloc(&ys[c], n * sizeof(float)));
            CHECK(cudaMemset(xs[c], 0, n * sizeof(float)));
            CHECK(cudaMemset(ys[c], 0, n * sizeof(float)));
        }
        double med[4];
        for (int m = 0; m < 4; m++) {
            std::vector<cudaEvent_t> ev(2 * reps);
            for (auto& e : ev) CHECK(cudaEventCreate(&e));
            for (int r = -3; r < reps; r++) {  // 3 untimed warm-up launches
                const int c = m == 3 ? ((r + 3) % copies) : 0;
                if (m == 1) CHECK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, s));
                if (m == 2) read_flush<<<sms * 8, 512, 0, s>>>((const float4*)flush, flush_bytes / 16, sink);
                if (r >= 0) CHECK(cudaEventRecord(ev[2 * r], s));
                triad<<<std::min<unsigned>(grid, (n + block - 1) / block), block, 0, s>>>(xs[c], ys[c], 2.f, n);
                if (r >= 0) CHECK(cudaEventRecord(ev[2 * r + 1], s));
            }
            CHECK(cudaStreamSynchronize(s));
            std::vector<float> t(reps);
            for (int r = 0; r < reps; r++) CHECK(cudaEventElapsedTime(&t[r], ev[2 * r], ev[2 * r + 1]));
            std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
            med[m] = t[reps / 2] * 1e3;
            for (auto& e : ev) CHECK(cudaEventDestroy(e));
        }
        printf("2^%-10u %10.1f", logn, 3 * bytes / 2 / 1e6);
        for (int m = 0; m < 4; m++) printf(" %10.2f", med[m]);
        printf("   GB/s:");
        for (int m = 0; m < 4; m++) printf(" %s %.0f", modes[m], 12.0 * n / (med[m] * 1e-6) / 1e9);
        printf("\n");
        for (int c = 0; c < copies; c++) {
            CHECK(cudaFree(xs[c]));
            CHECK(cudaFree(ys[c]));
        }
    }
    return 0;
}
