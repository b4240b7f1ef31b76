// Experiment, not part of the library: the K step of 256x128x16 (one block
// of 8 warps per SM, 16 x 8 products per lane, two shared stages) taken
// apart, each part timed with clock64 on 128 blocks, one per SM, over 4096
// of K. It prints FFMAs issued per cycle per scheduler (1.0 is the FP32
// peak). The shared layout, tile loaders and lane mapping are the library's
// (TileShape, TileLoader, lane_origin from src/kernels/sgemm_tiled.cuh); the
// stage's LDS and FFMAs are written out here so that their order can vary
// (serpentine rows, read every row of K, are the library's multiply_stage).
//
//   make bench-kstep  (or: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude kstep.cu)
//
// Rows:
//   inner        the stage's LDS and FFMAs alone: shared stages that never
//                change, no barrier, no global loads;
//   + barrier    the same with the block barrier of every K step;
//   + L1 tile    and each step's loads and shared stores, the loads always
//                of one tile (L1 hits);
//   NT NN TN TT  the whole step: blocks on a 16 x 8 grid of 256 x 128 tiles
//                of 4096 x 4096 operands, loads walking K from L2 (the
//                library's aligned main loop, without its edge paths);
// for four orders of a lane's 128 FFMAs in a row of K (fma_all), and, for
// the inner loop, fragments read from shared memory every row of K (as the
// library does), every 4th row, or once per stage (not a product any more:
// how fast the FFMAs go when the LDS are out of the way).
//
// What it showed on the H100 (docs/performance.md, "Sixteenth session"):
// the inner loop runs at 0.855 whatever the stage depth or warps per
// scheduler, 0.950 with fragments read once per stage; the whole NT step at
// 0.758, within 1% of the library's 4096^3 NT; FFMA orders that were 2-3%
// faster here were slower in the library.
#include <cstdio>
#include <cuda_runtime.h>

#include "kernels/sgemm_tiled.cuh"

using namespace tgemm::kernels;
using T = TileShape<256, 128, 16, 128, 32, 1, true, 8>;
static_assert(T::TM == 16 && T::TN == 8, "the orders below are written for 16 x 8 per lane");

enum Order { kPlain, kSerpentine, kRowPairs, kColumnPairs };
const char *const kOrderName[] = {"plain rows", "serpentine rows (library)", "row pairs", "column pairs"};

// acc += a b^T in order kOrder: plain rows; serpentine rows (each row walked
// opposite to the last); row pairs (rows 2p, 2p + 1 take b[j] in turn, pairs
// walking j in alternate directions); column pairs (the same by columns).
template <int kOrder>
__device__ __forceinline__ void fma_all(const float (&a)[16], const float (&b)[8], float (&acc)[16][8])
{
#pragma unroll
    for (int x = 0; x < 128; ++x) {
        int i, j;
        if (kOrder == kPlain) {
            i = x / 8, j = x % 8;
        } else if (kOrder == kSerpentine) {
            i = x / 8, j = (i & 1) ? 7 - x % 8 : x % 8;
        } else if (kOrder == kRowPairs) {
            const int p = x / 16, r = x % 16;
            i = 2 * p + (r & 1), j = (p & 1) ? 7 - r / 2 : r / 2;
        } else {
            const int p = x / 32, r = x % 32;
            i = (p & 1) ? 15 - r / 2 : r / 2, j = 2 * p + (r & 1);
        }
        acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

enum Mode { kInner, kBarrier, kL1Tile, kNT, kNN, kTN, kTT };

// kReload: fragments read every kReload-th row of K (1 as the library; 16 =
// once per stage).
template <int kOrder, int kMode, int kReload = 1>
__global__ void __launch_bounds__(256, 1) kstep(const float *ga, const float *gb, int steps, float *out, long long *cyc)
{
    constexpr bool ta = kMode == kTN || kMode == kTT, tb = kMode == kNT || kMode == kTT || kMode == kL1Tile;
    constexpr bool loads = kMode >= kL1Tile;
    extern __shared__ float4 smem_raw[];
    float *const sa = reinterpret_cast<float *>(smem_raw);
    float *const sb = sa + 2 * T::kStageA;
    for (int i = threadIdx.x; i < 2 * (T::kStageA + T::kStageB); i += 256)
        sa[i] = (i % 97) * 0.01f;
    const int64_t m0 = (blockIdx.x % 16) * 256, n0 = (blockIdx.x / 16) * 128;
    TileLoader<T::BM, T::BK, 256, !ta, true, true> la(ta ? ga + m0 * 4096 : ga + m0, 4096, T::BM);
    TileLoader<T::BN, T::BK, 256, tb, true, true> lb(tb ? gb + n0 : gb + n0 * 4096, 4096, T::BN);
    int lm0, ln0;
    lane_origin<T>(lm0, ln0);
    float acc[16][8];
    zero_accumulators<T>(acc);
    __syncthreads();
    const long long t0 = clock64();
    for (int t = 0; t < steps; ++t) {
        const int stage = t & 1;
        if (loads) {
            la.load_whole(kMode != kL1Tile);
            lb.load_whole(kMode != kL1Tile);
        }
        const float *pa = sa + stage * T::kStageA + lm0, *pb = sb + stage * T::kStageB + ln0;
        float a[16], b[8];
#pragma unroll
        for (int kk = 0; kk < 16; ++kk) {
            if (kk % kReload == 0) {
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const float4 v = *reinterpret_cast<const float4 *>(pa + kk * T::kLdsA + i * T::kStrideM);
                    a[4 * i] = v.x, a[4 * i + 1] = v.y, a[4 * i + 2] = v.z, a[4 * i + 3] = v.w;
                }
#pragma unroll
                for (int j = 0; j < 2; ++j) {
                    const float4 v = *reinterpret_cast<const float4 *>(pb + kk * T::kLdsB + j * T::kStrideN);
                    b[4 * j] = v.x, b[4 * j + 1] = v.y, b[4 * j + 2] = v.z, b[4 * j + 3] = v.w;
                }
            }
            fma_all<kOrder>(a, b, acc);
        }
        if (loads) {
            la.store(sa + (stage ^ 1) * T::kStageA);
            lb.store(sb + (stage ^ 1) * T::kStageB);
        }
        if (kMode >= kBarrier)
            __syncthreads();
        else
            asm volatile("" ::: "memory");  // keeps each step's LDS in its step
    }
    const long long t1 = clock64();
    float s = 0;
#pragma unroll
    for (int i = 0; i < 16; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            s += acc[i][j];
    out[blockIdx.x * 256 + threadIdx.x] = s;
    if (threadIdx.x == 0)
        cyc[blockIdx.x] = t1 - t0;
}

constexpr int kBlocks = 128, kSteps = 256;

// FFMAs per cycle per scheduler, the best of 3 launches (the mean over blocks of each).
template <int kOrder, int kMode, int kReload = 1>
double rate(const float *a, const float *b, float *out, long long *cyc)
{
    auto k = kstep<kOrder, kMode, kReload>;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)T::kSmemBytes);
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
        k<<<kBlocks, 256, T::kSmemBytes>>>(a, b, kSteps, out, cyc);
        if (cudaDeviceSynchronize() != cudaSuccess)
            return 0;
        long long h[kBlocks];
        cudaMemcpy(h, cyc, sizeof(h), cudaMemcpyDeviceToHost);
        double mean = 0;
        for (long long c : h)
            mean += (double)c / kBlocks;
        const double r = (double)kSteps * 2048 * 2 / mean;  // 2 warps per scheduler
        best = r > best ? r : best;
    }
    return best;
}

template <int kOrder>
void order_row(const float *a, const float *b, float *out, long long *cyc)
{
    printf("%-27s %7.3f %9.3f %9.3f %7.3f %7.3f %7.3f %7.3f\n", kOrderName[kOrder], rate<kOrder, kInner>(a, b, out, cyc),
           rate<kOrder, kBarrier>(a, b, out, cyc), rate<kOrder, kL1Tile>(a, b, out, cyc),
           rate<kOrder, kNT>(a, b, out, cyc), rate<kOrder, kNN>(a, b, out, cyc), rate<kOrder, kTN>(a, b, out, cyc),
           rate<kOrder, kTT>(a, b, out, cyc));
}

int main()
{
    const size_t bytes = sizeof(float) * 4096 * 4096;
    float *a, *b, *out;
    long long *cyc;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess ||
        cudaMalloc(&out, sizeof(float) * kBlocks * 256) != cudaSuccess || cudaMalloc(&cyc, sizeof(long long) * kBlocks) != cudaSuccess) {
        fprintf(stderr, "kstep: no GPU memory\n");
        return 1;
    }
    cudaMemset(a, 0, bytes);
    cudaMemset(b, 0, bytes);
    printf("FFMA per cycle per scheduler (1.0 = FP32 peak), 256x128x16 K step, 128 blocks, K = 4096\n");
    printf("%-27s %7s %9s %9s %7s %7s %7s %7s\n", "FFMA order", "inner", "+barrier", "+L1 tile", "NT", "NN", "TN", "TT");
    order_row<kSerpentine>(a, b, out, cyc);
    order_row<kPlain>(a, b, out, cyc);
    order_row<kRowPairs>(a, b, out, cyc);
    order_row<kColumnPairs>(a, b, out, cyc);
    printf("inner loop, serpentine rows, fragments read every row of K %.3f, every 4th row %.3f, once per stage %.3f\n",
           rate<kSerpentine, kInner, 1>(a, b, out, cyc), rate<kSerpentine, kInner, 4>(a, b, out, cyc),
           rate<kSerpentine, kInner, 16>(a, b, out, cyc));
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        fprintf(stderr, "kstep: %s\n", cudaGetErrorString(err));
        return 1;
    }
    return 0;
}
