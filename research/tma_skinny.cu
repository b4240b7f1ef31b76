// Experiment, not part of the library: skinny products (one side of C <= 16)
// streamed by the tensor copy engine (TMA) through an mbarrier ring.
// C(r, j) = sum_k X(r, k) Y(j, k), R long, S <= 16 short.
//   X MN-major (contiguous along r): skinny_n16 NN, X = A.  X K-major: skinny_m16 NN, X = B.
//   Y K-major: skinny_n16 NN, Y = B.  Y MN-major (contiguous along j): skinny_m16 NN, Y = A.
// Grid (R / 128, splits), clusters of (1, splits): each block streams 128 r x one K slice through a
// ring of STAGES TMA stages (X box 128 x 32, Y box 16 x 32), 8 consumer warps each own one
// 4-k chunk of every stage; warp partials summed in warp order, slices in rank order (DSMEM).
//   tma_skinny which(0: n16, 1: m16) R S K splits [reps]
// One output checked against cuBLAS (every element), then both timed
// alternately (CUDA events, median). SCRUB=1 writes 128 MB between calls
// (dirty lines in L2: slower for both; not used for the figures).
// Variants, to split where the time goes (compile-time; the checks fail for
// the ones that skip work, by design):
//   -DNOCOMPUTE=1   consumers only wait and release stages: the stream alone
//                   (with -DXR=256/512 -DXKB=64/128: other box shapes)
//   -DCOMPUTEONLY=1 the first STAGES stages loaded once and reused: the FFMA
//                   loop without the stream
//   -DNOCLUSTER=1   no cluster launch and no reduction of the K slices
// and shapes of the MN-major (n16) compute path:
//   -DXR=32/64/128  r per block (stage: XR x 512 * CONSUMERS / XR k), splits 1 runs
//                   without clusters
//   -DCONSUMERS=12  consumer warps; -DWGS=1 makes the producer a warpgroup that
//                   gives its registers to the consumers (setmaxnreg, CREGS)
//   -DQROWS=8       8 r per lane (needs -DNOLB=1 -maxrregcount: ptxas caps
//                   9 warps at 168 registers, and 224 do not launch)
//   -DYPRE=1        a stage's Y read into registers before its FFMAs
//
// What it showed on the H100 (docs/notes/history-skinny.md, "Two prototypes fed by
// the tensor copy engine"): the stream alone reads the 64 MB in 28.2-29.4 us;
// with the FFMAs 31.4 us (n16) / 35.0 us (m16) before the slices' reduction;
// with it, in clusters of 3 (clusters of 4 hold only 120 of 128 blocks and
// run in two waves), 33.7 / 38.0 us against the library's 38.4 / 40.7.
// Then (session of 2026-11-22, n16): 32 r per block and no split, 28.8-31.2
// us; 64 r split 2 in clusters 32.5-33.9; 12 consumers, YPRE, 4 or 9
// stages: no better. The FFMA loop alone (COMPUTEONLY) 24-26 us at 64% of
// issue slots, the stream alone 26-27 us. The library's skinny_tma.cu
// kernel is the 32-r form.
#include <cooperative_groups.h>
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tma_common.cuh"


#ifndef STAGES
#define STAGES 8
#endif
#ifndef XR
#define XR 128
#endif
#ifndef CONSUMERS
#define CONSUMERS 8
#endif
#ifndef XKB
#define XKB (128 * QROWS * CONSUMERS / XR)  // each consumer lane one 4-k group per stage
#endif
#ifndef NOLB
#define NOLB 0
#endif
#ifndef QROWS
#define QROWS 4  // MN-major X: r per lane (4 or 8)
#endif
#ifndef YPRE
#define YPRE 0
#endif
#ifndef NOCLUSTER
#define NOCLUSTER 0
#endif
#ifndef COMPUTEONLY
#define COMPUTEONLY 0
#endif
#ifndef NOCOMPUTE
#define NOCOMPUTE 0
#endif
constexpr int BR = XR, BKK = XKB, SMAX = 16;
constexpr int BOX_R = BR < 256 ? BR : 256;
static_assert(NOCOMPUTE || (BR * BKK == 128 * QROWS * CONSUMERS && (BR == 32 || BR == 64 || BR == 128)), "compute path");
// MN-major X: BR / QROWS lanes along r, RKL lanes along K; each lane owns QROWS r and one 4-k group per stage.
constexpr int RL = BR / QROWS < 32 ? BR / QROWS : 32, RKL = 32 / RL;
#ifndef WGS
#define WGS 0  // 1: the producer is a whole warpgroup, registers moved to the consumers (setmaxnreg)
#endif
#ifndef CREGS
#define CREGS 160
#endif
constexpr int kConsumers = CONSUMERS, kThreads = 32 * (kConsumers + (WGS ? 4 : 1));
static_assert(!WGS || kConsumers % 4 == 0, "whole warpgroups");
constexpr int X_BYTES = BR * BKK * 4, Y_BYTES = SMAX * BKK * 4, STAGE_BYTES = X_BYTES + Y_BYTES;
constexpr int SMEM = STAGES * STAGE_BYTES + 1024;
constexpr int PART_PITCH_J = BR + 4;  // MN-major X: part[w][j][r]
constexpr int PART_PITCH_R = SMAX + 1;  // K-major X: part[w][r][j]



struct P {
    int r, s, k, kc;  // kc: K per slice, a multiple of BKK
    float alpha, beta;
    float *c;
    int64_t c_r, c_j;  // C(r, j) at c + r * c_r + j * c_j
};

template <bool XK, bool YK>
#if NOLB  // no launch bounds: registers from -maxrregcount (ptxas caps 9 warps at 168)
__global__ void
#else
__global__ void __launch_bounds__(kThreads, 1)
#endif
    skinny_tma(const __grid_constant__ CUtensorMap tx, const __grid_constant__ CUtensorMap ty, P p)
{
    namespace cg = cooperative_groups;
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
    unsigned char *smem = smem_raw + ((1024u - (smem_addr(smem_raw) & 1023u)) & 1023u);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int r0 = blockIdx.x * BR;
    const int k0 = blockIdx.y * p.kc;
    const int klen = min(p.kc, p.k - k0);
    const int tiles = klen > 0 ? (klen + BKK - 1) / BKK : 0;
    if (threadIdx.x == 0) {
        ring_init(full, empty, STAGES, kConsumers);
    }
    __syncthreads();
    float *part = reinterpret_cast<float *>(smem);
    if (warp >= kConsumers) {
        if (WGS) asm volatile("setmaxnreg.dec.sync.aligned.u32 24;");
        if (warp == kConsumers && lane == 0) {
            for (int t = 0; t < (COMPUTEONLY ? min(tiles, STAGES) : tiles); ++t) {
                const int s = t % STAGES;
                if (t >= STAGES)
                    bar_wait(&empty[s], ((t / STAGES) - 1) & 1);
                unsigned char *st = smem + s * STAGE_BYTES;
                bar_expect(&full[s], STAGE_BYTES);
                const int kt = k0 + t * BKK;
                for (int bk = 0; bk < BKK / 32; ++bk)
                    for (int br = 0; br < BR / BOX_R; ++br) {
                        unsigned char *d = st + (bk * (BR / BOX_R) + br) * BOX_R * 32 * 4;
                        if (XK) copy_box(d, &tx, kt + bk * 32, r0 + br * BOX_R, &full[s]);
                        else copy_box(d, &tx, r0 + br * BOX_R, kt + bk * 32, &full[s]);
                    }
                if (YK) {
                    for (int b = 0; b < BKK / 32; ++b)
                        copy_box(st + X_BYTES + b * SMAX * 128, &ty, kt + 32 * b, 0, &full[s]);
                } else {
                    copy_box(st + X_BYTES, &ty, 0, kt, &full[s]);
                }
            }
        }
    } else {
        if (WGS) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(CREGS));
        constexpr int Q = XK ? 4 : QROWS;
        float acc[Q][SMAX];
#pragma unroll
        for (int q = 0; q < Q; ++q)
#pragma unroll
            for (int j = 0; j < SMAX; ++j)
                acc[q][j] = 0.0f;
        const int w = warp;  // this warp's 4-k chunk of every stage (K-major X)
        const int rl = lane % RL, g = w * RKL + lane / RL;  // MN-major X: this lane's 4 r and 4-k group
        for (int t = 0; t < tiles; ++t) {
            const int s = t % STAGES;
            if (!COMPUTEONLY || t < STAGES)
                bar_wait(&full[s], (t / STAGES) & 1);
#if NOCOMPUTE
            __syncwarp();
            if (lane == 0)
                bar_arrive(&empty[s]);
            continue;
#endif
            const unsigned char *Xs = smem + s * STAGE_BYTES;
            const unsigned char *Ys = Xs + X_BYTES;
            float x[Q][4];  // [q][k]
            if (XK) {
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const int r = lane + 32 * q;
                    const float4 v = ld_swz128(Xs, r, w);
                    x[q][0] = v.x; x[q][1] = v.y; x[q][2] = v.z; x[q][3] = v.w;
                }
            } else {
#pragma unroll
                for (int k = 0; k < 4; ++k)
#pragma unroll
                    for (int h = 0; h < Q / 4; ++h) {
                        const float4 v = *reinterpret_cast<const float4 *>(Xs + ((g * 4 + k) * BR + rl * Q + 4 * h) * 4);
                        x[4 * h][k] = v.x; x[4 * h + 1][k] = v.y; x[4 * h + 2][k] = v.z; x[4 * h + 3][k] = v.w;
                    }
            }
            if (YK) {
#if YPRE
                float4 yv[SMAX];
#pragma unroll
                for (int j = 0; j < SMAX; ++j)
                    yv[j] = XK ? ld_swz128(Ys, j, w) : ld_swz128(Ys + (g / 8) * SMAX * 128, j, g % 8);
#endif
#pragma unroll
                for (int j = 0; j < SMAX; ++j) {
#if YPRE
                    const float4 v = yv[j];
#else
                    const float4 v = XK ? ld_swz128(Ys, j, w) : ld_swz128(Ys + (g / 8) * SMAX * 128, j, g % 8);
#endif
                    const float y[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                    for (int k = 0; k < 4; ++k)
#pragma unroll
                        for (int q = 0; q < Q; ++q)
                            acc[q][j] = fmaf(x[q][k], y[k], acc[q][j]);
                }
            } else {
#pragma unroll
                for (int jg = 0; jg < SMAX / 4; ++jg) {
                    float y[4][4];
#pragma unroll
                    for (int k = 0; k < 4; ++k) {
                        const float4 v = *reinterpret_cast<const float4 *>(Ys + ((w * 4 + k) * SMAX + jg * 4) * 4);
                        y[k][0] = v.x; y[k][1] = v.y; y[k][2] = v.z; y[k][3] = v.w;
                    }
#pragma unroll
                    for (int k = 0; k < 4; ++k)
#pragma unroll
                        for (int jj = 0; jj < 4; ++jj)
#pragma unroll
                            for (int q = 0; q < Q; ++q)
                                acc[q][jg * 4 + jj] = fmaf(x[q][k], y[k][jj], acc[q][jg * 4 + jj]);
                }
            }
            __syncwarp();
            if (lane == 0)
                bar_arrive(&empty[s]);
        }
#if NOCOMPUTE
        if (acc[0][0] == 1.0f) p.c[0] = 0;
#else
        // every consumer is past its last stage: the ring becomes the partials
        if (!XK) {  // the lanes of one r group, in a fixed order
#pragma unroll
            for (int o = RL; o < 32; o *= 2)
#pragma unroll
                for (int q = 0; q < Q; ++q)
#pragma unroll
                    for (int j = 0; j < SMAX; ++j)
                        acc[q][j] += __shfl_xor_sync(0xffffffffu, acc[q][j], o);
        }
        asm volatile("bar.sync 1, %0;" ::"n"(kConsumers * 32) : "memory");
        if (XK || lane < RL) {
#pragma unroll
            for (int q = 0; q < Q; ++q)
#pragma unroll
                for (int j = 0; j < SMAX; ++j) {
                    if (XK) part[(w * BR + lane + 32 * q) * PART_PITCH_R + j] = acc[q][j];
                    else part[(w * SMAX + j) * PART_PITCH_J + rl * Q + q] = acc[q][j];
                }
        }
        asm volatile("bar.sync 1, %0;" ::"n"(kConsumers * 32) : "memory");
        // warp partials summed in warp order, into warp 0's slot
        for (int e = threadIdx.x; e < BR * SMAX; e += kConsumers * 32) {
            const int idx = XK ? (e / SMAX) * PART_PITCH_R + e % SMAX : (e / BR) * PART_PITCH_J + e % BR;
            const int wstride = XK ? BR * PART_PITCH_R : SMAX * PART_PITCH_J;
            float v = part[idx];
#pragma unroll
            for (int ww = 1; ww < kConsumers; ++ww)
                v += part[ww * wstride + idx];
            part[idx] = v;
        }
#endif
    }
#if NOCOMPUTE || NOCLUSTER
    if (NOCOMPUTE && !NOCLUSTER) cg::this_cluster().sync();
    if (NOCLUSTER && !NOCOMPUTE && threadIdx.x < BR) p.c[r0 + threadIdx.x] = part[threadIdx.x];
    return;
#endif
    if (gridDim.y == 1) {  // one K slice: no cluster
        __syncthreads();
        for (int e = threadIdx.x; e < BR * SMAX; e += kThreads) {
            const int idx = XK ? (e / SMAX) * PART_PITCH_R + e % SMAX : (e / BR) * PART_PITCH_J + e % BR;
            const int r = XK ? e / SMAX : e % BR, j = XK ? e % SMAX : e / BR;
            if (r0 + r < p.r && j < p.s) {
                float *c = p.c + (r0 + r) * p.c_r + j * p.c_j;
                const float o = p.alpha * part[idx];
                *c = p.beta != 0.0f ? fmaf(p.beta, *c, o) : o;
            }
        }
        return;
    }
    // slices summed in rank order across the cluster
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    const int n = cluster.num_blocks(), rank = cluster.block_rank();
    const int elems = BR * SMAX, per = (elems + n - 1) / n;
    for (int e = rank * per + threadIdx.x; e < min(elems, (rank + 1) * per); e += kThreads) {
        const int idx = XK ? (e / SMAX) * PART_PITCH_R + e % SMAX : (e / BR) * PART_PITCH_J + e % BR;
        const int r = XK ? e / SMAX : e % BR, j = XK ? e % SMAX : e / BR;
        float v = 0.0f;
        for (int q = 0; q < n; ++q)
            v += cluster.map_shared_rank(part, q)[idx];
        if (r0 + r < p.r && j < p.s) {
            float *c = p.c + (r0 + r) * p.c_r + j * p.c_j;
            const float o = p.alpha * v;
            *c = p.beta != 0.0f ? fmaf(p.beta, *c, o) : o;
        }
    }
    cluster.sync();
}


template <bool XK, bool YK>
static void launch(const CUtensorMap &tx, const CUtensorMap &ty, const P &p, int splits, cudaStream_t st)
{
    static bool set = false;
    if (!set) {
        CK(cudaFuncSetAttribute(skinny_tma<XK, YK>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
        CK(cudaFuncSetAttribute(skinny_tma<XK, YK>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        set = true;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((p.r + BR - 1) / BR, splits, 1);
    cfg.blockDim = dim3(kThreads, 1, 1);
    cfg.dynamicSmemBytes = SMEM;
    cfg.stream = st;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 1;
    attr[0].val.clusterDim.y = splits;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = NOCLUSTER || splits == 1 ? 0 : 1;
    static bool told = false;
    if (!told && cfg.numAttrs) {
        int nc = 0;
        CK(cudaOccupancyMaxActiveClusters(&nc, skinny_tma<XK, YK>, &cfg));
        printf("cluster (1, %d): at most %d clusters resident (%d blocks), grid has %d\n", splits, nc, nc * splits,
               cfg.gridDim.x * cfg.gridDim.y);
        told = true;
    }
    CK(cudaLaunchKernelEx(&cfg, skinny_tma<XK, YK>, tx, ty, p));
}

int main(int argc, char **argv)
{
    const int which = argc > 1 ? atoi(argv[1]) : 0;
    const int R = argc > 2 ? atoi(argv[2]) : 4096, S = argc > 3 ? atoi(argv[3]) : 16, K = argc > 4 ? atoi(argv[4]) : 4096;
    const int splits = argc > 5 ? atoi(argv[5]) : 4, reps = argc > 6 ? atoi(argv[6]) : 50;
    if (which == 1 && (BR != 128 || BKK != 32 || kConsumers != 8)) {
        printf("K-major X (which 1): XR 128 XKB 32 only\n");
        return 1;
    }
    cublasHandle_t h;
    cublasCreate(&h);
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    cublasSetStream(h, st);
    // which 0: M = R, N = S (C is R x S), NN: A R x K (X), B K x S (Y)
    // which 1: M = S, N = R (C is S x R), NN: A S x K (Y), B K x R (X)
    const int M = which == 0 ? R : S, N = which == 0 ? S : R;
    std::vector<float> hA((size_t)M * K), hB((size_t)K * N);
    const unsigned seed = 777;
    printf("seed %u\n", seed);
    srand(seed);
    for (auto &x : hA) x = (rand() / (float)RAND_MAX) * 2 - 1;
    for (auto &x : hB) x = (rand() / (float)RAND_MAX) * 2 - 1;
    float *A, *B, *C, *Rf;
    CK(cudaMalloc(&A, hA.size() * 4));
    CK(cudaMalloc(&B, hB.size() * 4));
    CK(cudaMalloc(&C, (size_t)M * N * 4));
    CK(cudaMalloc(&Rf, (size_t)M * N * 4));
    CK(cudaMemcpy(A, hA.data(), hA.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hB.data(), hB.size() * 4, cudaMemcpyHostToDevice));
    const float alpha = 1.0f, beta = 0.0f;
    P p;
    p.r = R; p.s = S; p.k = K;
    p.kc = ((K + splits - 1) / splits + BKK - 1) / BKK * BKK;
    p.alpha = alpha; p.beta = beta; p.c = C;
    CUtensorMap tx, ty;
    if (which == 0) {
        tx = make_map(A, M, K, M, BOX_R, 32, false);      // X = A, MN-major
        ty = make_map(B, K, N, K, 32, SMAX, true);      // Y = B, K-major, boxes of 32 k
        p.c_r = 1; p.c_j = M;
    } else {
        tx = make_map(B, K, N, K, 32, BOX_R, true);       // X = B, K-major
        ty = make_map(A, M, K, M, SMAX, BKK, false);    // Y = A, MN-major
        p.c_r = M; p.c_j = 1;
    }
    auto run = [&]() {
        if (which == 0) launch<false, true>(tx, ty, p, splits, st);
        else launch<true, false>(tx, ty, p, splits, st);
    };
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, M, B, K, &beta, Rf, M);
    CK(cudaMemsetAsync(C, 0xff, (size_t)M * N * 4, st));
    run();
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    std::vector<float> hc((size_t)M * N), hr((size_t)M * N);
    CK(cudaMemcpy(hc.data(), C, hc.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hr.data(), Rf, hr.size() * 4, cudaMemcpyDeviceToHost));
    double maxerr = 0;
    size_t bad = 0;
    for (size_t i = 0; i < hc.size(); ++i) {
        const double d = std::fabs((double)hc[i] - hr[i]);
        if (!(d <= 1e-4 * std::sqrt((double)K) * 4)) ++bad;
        if (!(d <= maxerr)) maxerr = d;
    }
    // bytes that must move / 2.88 TB/s
    const double floor_us = 4.0 * ((double)M * K + (double)K * N + (double)M * N) / 2.88e12 * 1e6;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    // flush L2 between calls: X is 64 MB, but rotate anyway with a 128 MB scrub
    float *scrub;
    CK(cudaMalloc(&scrub, 128u << 20));
    std::vector<float> tt, tc;
    for (int i = 0; i < reps; ++i) {
        float ms;
        if (getenv("SCRUB")) CK(cudaMemsetAsync(scrub, i, 128u << 20, st));
        cudaEventRecord(e0, st);
        run();
        cudaEventRecord(e1, st);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        tt.push_back(ms * 1e3f);
        if (getenv("SCRUB")) CK(cudaMemsetAsync(scrub, i, 128u << 20, st));
        cudaEventRecord(e0, st);
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, M, B, K, &beta, Rf, M);
        cudaEventRecord(e1, st);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        tc.push_back(ms * 1e3f);
    }
    std::sort(tt.begin(), tt.end());
    std::sort(tc.begin(), tc.end());
    const double mt = tt[tt.size() / 2], mc = tc[tc.size() / 2];
    printf("%s %dx%dx%d XR %d XKB %d nocompute %d nocluster %d computeonly %d splits %d stages %d: tma %.1f us (%.2fx floor %.1f) | cublas %.1f us | ratio %.2f | maxerr %.3g bad %zu\n",
           which == 0 ? "n16-like" : "m16-like", M, N, K, XR, XKB, NOCOMPUTE, NOCLUSTER, COMPUTEONLY, splits, STAGES, mt, mt / floor_us, floor_us, mc, mc / mt, maxerr, bad);
    CK(cudaGetLastError());
    return 0;
}
