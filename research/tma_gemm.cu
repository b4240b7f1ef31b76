// Experiment, not part of the library: a warp-specialized FFMA SGEMM fed by
// the tensor copy engine (TMA, cp.async.bulk.tensor) through an mbarrier
// ring. One producer warpgroup (one thread issues the copies; setmaxnreg
// 40), two consumer warpgroups (setmaxnreg 232) of 8 warps x 64x64 each,
// 256x128 tile, BK = 32, STAGES stages of 48 KB. Operands contiguous along
// K are copied with the 128-byte swizzle and read 4 K at a time per row;
// operands contiguous along M/N unswizzled. Edge tiles: the copy engine
// fills out-of-bounds elements with zeros; stores are bounds-checked. Needs
// lda, ldb multiples of 4 and 16-byte aligned pointers (tensor-map rules).
// Each output is checked against cuBLAS (every element), then both are timed
// alternately in the same process (CUDA events, median of reps).
//
//   make -C research tma  (or: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a tma_gemm.cu -lcublas)
//   tma_gemm M N K [reps]            all four transpose pairs
//   -DPREFETCH=1: A's next fragment read while the current one is multiplied
//
// What it showed on the H100 (docs/notes/history-skinny.md, "Two prototypes fed by
// the tensor copy engine"): 4096^3 NN/NT/TN/TT 0.965/0.983/0.931/0.779 of
// cuBLAS, the same as the library's 256x128x16 where both K-major; issue
// slots 84% busy, as the library's kernel: feeding the operands without
// LDG/STS and block barriers does not change what limits the FFMA loop.
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tma_common.cuh"


#ifndef PREFETCH
#define PREFETCH 0
#endif
#ifndef STAGES
#define STAGES 4
#endif
constexpr int BM = 256, BN = 128, BK = 32;
constexpr int kConsumers = 8;
constexpr int kThreads = 32 * (kConsumers + 4);  // a producer warpgroup + 2 consumer warpgroups
constexpr int A_BYTES = BM * BK * 4, B_BYTES = BN * BK * 4;
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM = STAGES * STAGE_BYTES + 1024;


struct P {
    int m, n, k;
    float alpha, beta;
    float *c;
    int64_t ldc;
};

// AK: A's tile is K-major (transa): rows m of 32 k, 128-byte swizzle.
// BK_: B's tile is K-major (!transb): rows n of 32 k, 128-byte swizzle.
template <bool AK, bool BKM>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_tma(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb, P p)
{
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
    // 128-byte swizzle repeats every 1024 bytes of shared address: align the stages to it
    unsigned char *smem = smem_raw + ((1024u - (smem_addr(smem_raw) & 1023u)) & 1023u);

    // raster: groups of 8 tile rows
    const int tiles_m = (p.m + BM - 1) / BM, tiles_n = (p.n + BN - 1) / BN;
    const int bid = blockIdx.x;
    const int group = 8;
    const int per_group = group * tiles_n;
    const int g = bid / per_group, first_m = g * group;
    const int gm = min(tiles_m - first_m, group);
    const int tm = first_m + (bid % per_group) % gm, tn = (bid % per_group) / gm;
    const int m0 = tm * BM, n0 = tn * BN;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        ring_init(full, empty, STAGES, kConsumers);
    }
    __syncthreads();
    const int ktiles = (p.k + BK - 1) / BK;

    if (warp < 4) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (warp == 0 && lane == 0) {
            for (int t = 0; t < ktiles; ++t) {
                const int s = t % STAGES;
                if (t >= STAGES)
                    bar_wait(&empty[s], ((t / STAGES) - 1) & 1);
                unsigned char *st = smem + s * STAGE_BYTES;
                bar_expect(&full[s], STAGE_BYTES);
                if (AK)
                    copy_box(st, &ta, t * BK, m0, &full[s]);
                else
                    copy_box(st, &ta, m0, t * BK, &full[s]);
                if (BKM)
                    copy_box(st + A_BYTES, &tb, t * BK, n0, &full[s]);
                else
                    copy_box(st + A_BYTES, &tb, n0, t * BK, &full[s]);
            }
        }
    } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const int cw = warp - 4;
    const int wm = (cw % 4) * 64, wn = (cw / 4) * 64;
    const int lm = lane % 8, ln = lane / 8;
    float acc[8][16];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 16; ++j)
            acc[i][j] = 0.0f;

    auto load_a = [&](float (&a)[4][8], const unsigned char *As, int kk) {
        if (AK) {
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const int r = wm + i * 8 + lm;
                const float4 v = ld_swz128(As, r, kk);
                a[0][i] = v.x; a[1][i] = v.y; a[2][i] = v.z; a[3][i] = v.w;
            }
        } else {
#pragma unroll
            for (int k = 0; k < 4; ++k) {
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const float4 v = *reinterpret_cast<const float4 *>(As + ((kk * 4 + k) * BM + wm + h * 32 + lm * 4) * 4);
                    a[k][h * 4 + 0] = v.x; a[k][h * 4 + 1] = v.y; a[k][h * 4 + 2] = v.z; a[k][h * 4 + 3] = v.w;
                }
            }
        }
    };
    auto compute = [&](const float (&a)[4][8], const unsigned char *Bs, int kk) {
        if (BKM) {
#pragma unroll
            for (int j = 0; j < 16; ++j) {
                const int r = wn + j * 4 + ln;
                const float4 v = ld_swz128(Bs, r, kk);
                const float b[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int k = 0; k < 4; ++k)
#pragma unroll
                    for (int i = 0; i < 8; ++i)
                        acc[i][j] = fmaf(a[k][i], b[k], acc[i][j]);
            }
        } else {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                float b[4][4];
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    const float4 v = *reinterpret_cast<const float4 *>(Bs + ((kk * 4 + k) * BN + wn + q * 16 + ln * 4) * 4);
                    b[k][0] = v.x; b[k][1] = v.y; b[k][2] = v.z; b[k][3] = v.w;
                }
#pragma unroll
                for (int k = 0; k < 4; ++k)
#pragma unroll
                    for (int jj = 0; jj < 4; ++jj)
#pragma unroll
                        for (int i = 0; i < 8; ++i)
                            acc[i][q * 4 + jj] = fmaf(a[k][i], b[k][jj], acc[i][q * 4 + jj]);
            }
        }
    };
#if PREFETCH
    // A's fragment for the next K group is read while this one is multiplied.
    constexpr int G = BK / 4;  // K groups per stage
    const int total = ktiles * G;
    float a0[4][8], a1[4][8];
    bar_wait(&full[0], 0);
    load_a(a0, smem, 0);
#pragma unroll 1
    for (int g = 0; g < total; g += 2) {
        const int t = g / G, s = t % STAGES, kk = g % G;
        const unsigned char *As = smem + s * STAGE_BYTES;
        load_a(a1, As, kk + 1);
        compute(a0, As + A_BYTES, kk);
        if (g + 2 < total) {
            const int t2 = (g + 2) / G, s2 = t2 % STAGES;
            if (kk + 2 == G)
                bar_wait(&full[s2], (t2 / STAGES) & 1);
            load_a(a0, smem + s2 * STAGE_BYTES, (g + 2) % G);
        }
        compute(a1, As + A_BYTES, kk + 1);
        if (kk + 2 == G) {
            __syncwarp();
            if (lane == 0)
                bar_arrive(&empty[s]);
        }
    }
#else
    for (int t = 0; t < ktiles; ++t) {
        const int s = t % STAGES;
        bar_wait(&full[s], (t / STAGES) & 1);
        const unsigned char *As = smem + s * STAGE_BYTES;
#pragma unroll 1
        for (int kk = 0; kk < BK / 4; ++kk) {
            float a[4][8];
            load_a(a, As, kk);
            compute(a, As + A_BYTES, kk);
        }
        __syncwarp();
        if (lane == 0)
            bar_arrive(&empty[s]);
    }
#endif

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int m = m0 + (AK ? wm + i * 8 + lm : wm + (i / 4) * 32 + lm * 4 + i % 4);
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            const int n = n0 + (BKM ? wn + j * 4 + ln : wn + (j / 4) * 16 + ln * 4 + j % 4);
            if (m < p.m && n < p.n) {
                float *c = p.c + m + static_cast<int64_t>(n) * p.ldc;
                const float v = p.alpha * acc[i][j];
                *c = p.beta != 0.0f ? fmaf(p.beta, *c, v) : v;
            }
        }
    }
    }
}


template <bool AK, bool BKM>
static void launch(const float *A, int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc, int M, int N, int K,
                   float alpha, float beta, cudaStream_t st)
{
    CUtensorMap ta = AK ? make_map(A, K, M, lda, BK, BM, true) : make_map(A, M, K, lda, BM, BK, false);
    CUtensorMap tb = BKM ? make_map(B, K, N, ldb, BK, BN, true) : make_map(B, N, K, ldb, BN, BK, false);
    P p{M, N, K, alpha, beta, C, ldc};
    static bool set = false;
    if (!set) {
        CK(cudaFuncSetAttribute(gemm_tma<AK, BKM>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
        set = true;
    }
    const int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
    gemm_tma<AK, BKM><<<tiles, kThreads, SMEM, st>>>(ta, tb, p);
}

static void run(bool ta, bool tb, const float *A, int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc,
                int M, int N, int K, float alpha, float beta, cudaStream_t st)
{
    if (!ta && !tb) launch<false, true>(A, lda, B, ldb, C, ldc, M, N, K, alpha, beta, st);
    if (!ta && tb) launch<false, false>(A, lda, B, ldb, C, ldc, M, N, K, alpha, beta, st);
    if (ta && !tb) launch<true, true>(A, lda, B, ldb, C, ldc, M, N, K, alpha, beta, st);
    if (ta && tb) launch<true, false>(A, lda, B, ldb, C, ldc, M, N, K, alpha, beta, st);
}

int main(int argc, char **argv)
{
    int M = argc > 1 ? atoi(argv[1]) : 4096, N = argc > 2 ? atoi(argv[2]) : 4096, K = argc > 3 ? atoi(argv[3]) : 4096;
    int reps = argc > 4 ? atoi(argv[4]) : 20;
    cublasHandle_t h;
    cublasCreate(&h);
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    cublasSetStream(h, st);
    const size_t maxmk = static_cast<size_t>(std::max(M, K)) * std::max(M, K);
    const size_t maxkn = static_cast<size_t>(std::max(N, K)) * std::max(N, K);
    std::vector<float> hA(maxmk), hB(maxkn);
    unsigned seed = 12345;
    printf("seed %u\n", seed);
    srand(seed);
    for (auto &x : hA) x = (rand() / (float)RAND_MAX) * 2 - 1;
    for (auto &x : hB) x = (rand() / (float)RAND_MAX) * 2 - 1;
    float *A, *B, *C, *R;
    CK(cudaMalloc(&A, maxmk * 4));
    CK(cudaMalloc(&B, maxkn * 4));
    CK(cudaMalloc(&C, static_cast<size_t>(M) * N * 4));
    CK(cudaMalloc(&R, static_cast<size_t>(M) * N * 4));
    CK(cudaMemcpy(A, hA.data(), maxmk * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hB.data(), maxkn * 4, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    const char *names[4] = {"NN", "NT", "TN", "TT"};
    for (int v = 0; v < 4; ++v) {
        const bool ta = v >= 2, tb = v % 2;
        const int64_t lda = ta ? K : M, ldb = tb ? N : K;
        const float alpha = 1.0f, beta = 0.0f;
        cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, M, N, K, &alpha, A, lda, B, ldb,
                    &beta, R, M);
        CK(cudaMemsetAsync(C, 0xff, static_cast<size_t>(M) * N * 4, st));
        run(ta, tb, A, lda, B, ldb, C, M, M, N, K, alpha, beta, st);
        CK(cudaStreamSynchronize(st));
        CK(cudaGetLastError());
        std::vector<float> hc(static_cast<size_t>(M) * N), hr(static_cast<size_t>(M) * N);
        CK(cudaMemcpy(hc.data(), C, hc.size() * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hr.data(), R, hr.size() * 4, cudaMemcpyDeviceToHost));
        double maxerr = 0;
        size_t bad = 0;
        for (size_t i = 0; i < hc.size(); ++i) {
            const double d = std::fabs((double)hc[i] - hr[i]);
            if (!(d <= 1e-4 * std::sqrt((double)K) * 4)) ++bad;
            if (d > maxerr || d != d) maxerr = d;
        }
        std::vector<float> tt, tc;
        for (int r = 0; r < reps; ++r) {
            float ms;
            cudaEventRecord(e0, st);
            run(ta, tb, A, lda, B, ldb, C, M, M, N, K, alpha, beta, st);
            cudaEventRecord(e1, st);
            cudaEventSynchronize(e1);
            cudaEventElapsedTime(&ms, e0, e1);
            tt.push_back(ms);
            cudaEventRecord(e0, st);
            cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, M, N, K, &alpha, A, lda, B,
                        ldb, &beta, R, M);
            cudaEventRecord(e1, st);
            cudaEventSynchronize(e1);
            cudaEventElapsedTime(&ms, e0, e1);
            tc.push_back(ms);
        }
        std::sort(tt.begin(), tt.end());
        std::sort(tc.begin(), tc.end());
        const double fl = 2.0 * M * N * K;
        const double mt = tt[tt.size() / 2], mc = tc[tc.size() / 2];
        printf("%dx%dx%d %s stages %d prefetch %d: tma %.1f us %.2f TF | cublas %.1f us %.2f TF | ratio %.3f | maxerr %.3g bad %zu\n", M, N,
               K, names[v], STAGES, PREFETCH, mt * 1e3, fl / mt / 1e9, mc * 1e3, fl / mc / 1e9, mc / mt, maxerr, bad);
    }
    CK(cudaGetLastError());
    return 0;
}
