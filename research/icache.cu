// Experiment, not part of the library: how large a loop body the SM's
// instruction cache holds. Every thread runs a loop whose body is N
// independent FFMAs (16 chains, 16 bytes of code each), W warps per
// scheduler on every SM; the program prints warp instructions issued per
// cycle per scheduler against the body's code size.
//
//   make -C research icache  (or: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a icache.cu)
//
// What it showed on the H100 (docs/notes/history-tiled.md, "Sixteenth session"):
// 0.98-0.99 up to 32 KB of body at 2 warps per scheduler, 0.935 at 36 KB,
// 0.88 from 40 KB (one warp per scheduler: 0.42 from 40 KB).
#include <cstdio>
#include <cuda_runtime.h>

template <int N>
__global__ void __launch_bounds__(512) body(float *out, float x, float y, int iters, long long *cyc)
{
    float acc[16];
#pragma unroll
    for (int i = 0; i < 16; ++i)
        acc[i] = threadIdx.x * 0.001f + i;
    __syncthreads();
    const long long t0 = clock64();
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int i = 0; i < N; ++i)
            acc[i & 15] = fmaf(acc[i & 15], x, y);
    }
    __syncthreads();
    const long long t1 = clock64();
    float s = 0;
#pragma unroll
    for (int i = 0; i < 16; ++i)
        s += acc[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    if (threadIdx.x == 0)
        cyc[blockIdx.x] = t1 - t0;
}

template <int N>
bool row(float *out, long long *cyc, int sms)
{
    const int iters = (1 << 21) / N;  // 2M FFMAs per thread
    printf("%6d %7.1f", N, N * 16 / 1024.0);
    for (int w = 1; w <= 4; ++w) {
        for (int rep = 0; rep < 2; ++rep)  // the first launch warms up
            body<N><<<sms, 128 * w>>>(out, 0.999f, 0.001f, iters, cyc);
        if (cudaDeviceSynchronize() != cudaSuccess)
            return false;
        long long h[1024];
        cudaMemcpy(h, cyc, sizeof(long long) * sms, cudaMemcpyDeviceToHost);
        double mean = 0;
        for (int i = 0; i < sms; ++i)
            mean += (double)h[i] / sms;
        printf(" %9.3f", (double)iters * N * w / mean);
    }
    printf("\n");
    return true;
}

int main()
{
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    float *out;
    long long *cyc;
    if (sms <= 0 || sms > 1024 || cudaMalloc(&out, sizeof(float) * sms * 512) != cudaSuccess ||
        cudaMalloc(&cyc, sizeof(long long) * sms) != cudaSuccess) {
        fprintf(stderr, "icache: no usable GPU\n");
        return 1;
    }
    printf("warp instructions issued per cycle per scheduler, loop body of N FFMAs\n");
    printf("%6s %7s %9s %9s %9s %9s\n", "N", "KB", "1 warp", "2 warps", "3 warps", "4 warps");
    const bool ok = row<512>(out, cyc, sms) && row<1024>(out, cyc, sms) && row<1536>(out, cyc, sms) &&
                    row<1792>(out, cyc, sms) && row<2048>(out, cyc, sms) && row<2304>(out, cyc, sms) &&
                    row<2560>(out, cyc, sms) && row<3072>(out, cyc, sms) && row<4096>(out, cyc, sms) &&
                    row<8192>(out, cyc, sms);
    if (!ok) {
        fprintf(stderr, "icache: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    return 0;
}
